package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/natsserver"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// subprocessEnv marks the test binary re-executed as the engram command (see
// TestEngramSubprocess).
const subprocessEnv = "ENGRAM_TEST_SUBPROCESS"

// TestEngramSubprocess is not a test: run by engramCmd as a child process, it is
// `engram ARGS…`, with the arguments after "--".
func TestEngramSubprocess(t *testing.T) {
	if os.Getenv(subprocessEnv) != "1" {
		t.Skip("the engram command of other tests' child processes")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Args = append([]string{"engram"}, args...)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, args, os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// engramCmd is `engram args…` as a child process with env (and nothing else of the
// test's environment but PATH and HOME), killed when ctx ends: a child that hangs
// fails its test at the test's deadline instead of holding the package until go
// test's, and one left running by a failed test goes with it.
func engramCmd(ctx context.Context, t *testing.T, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^TestEngramSubprocess$", "--"}, args...)...)
	cmd.WaitDelay = 10 * time.Second
	cmd.Env = []string{subprocessEnv + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

// lockedBuffer is a bytes.Buffer a child process and the test may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// rebuildMarker is what nats-server logs when a second server opened a store whose
// state another one had changed under it.
const rebuildMarker = "will rebuild"

// TestOperatorCommandsJoinTheServe: with `engram serve` running on the embedded
// defaults, `engram dlq replay --all` and `engram users delete` run while turns are
// ingested join serve's NATS server instead of opening the store a second time: no
// stream state is rebuilt, every turn (live and replayed) is stored once, the
// deleted user is gone; and a second serve on the same data directory is refused
// with an error naming the process that holds the store.
func TestOperatorCommandsJoinTheServe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts engram as child processes")
	}
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dataDir := t.TempDir()
	dbURL := pgtest.URL(t)
	const tenant, deadLetters, liveTurns = "t1", 5, 30

	// Dead letters from an extractor that rejected everything, in the store serve
	// will open: replaying them must get them extracted by serve's workers.
	seedDeadLetters(ctx, t, filepath.Join(dataDir, "nats"), tenant, "replayed", deadLetters)

	tok, err := httpapi.NewToken()
	if err != nil {
		t.Fatal(err)
	}
	httpPort, natsPort := freeLoopbackPort(t), freeLoopbackPort(t)
	env := map[string]string{
		"ENGRAM_DATABASE_URL": dbURL, "ENGRAM_DATA_DIR": dataDir, "ENGRAM_NATS_PORT": strconv.Itoa(natsPort),
		"ENGRAM_HTTP_ADDR": "127.0.0.1:" + strconv.Itoa(httpPort), "ENGRAM_TOKENS": tenant + "/test=" + httpapi.HashToken(tok),
		"ENGRAM_CONSOLIDATE_CRON": "off", "ENGRAM_REEMBED": "off",
	}
	serve := engramCmd(ctx, t, env, "serve")
	var serveLog lockedBuffer
	serve.Stdout, serve.Stderr = &serveLog, &serveLog
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serve.Wait() }()
	stopServe := func() {
		_ = serve.Process.Signal(os.Interrupt)
		if err := <-served; err != nil {
			t.Errorf("serve: %v\n%s", err, serveLog.String())
		}
	}
	base := "http://127.0.0.1:" + strconv.Itoa(httpPort)
	waitReady(ctx, t, base, served, &serveLog)
	c := client.New(base, tok)

	pool, err := memory.Connect(ctx, dbURL, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	turns := func(user string) int {
		return pgtest.Count(t, pool, tenant, "SELECT count(*) FROM turns WHERE user_id = $1", user)
	}
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("%s: not reached before the deadline\nserve log:\n%s", what, serveLog.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The user to delete has turns (and memories) before the deletion.
	for i := range 3 {
		if _, err := c.AddTurns(ctx, client.Turn{TurnID: fmt.Sprintf("gone-%d", i), UserID: "gone", SessionID: "s1",
			Role: client.RoleUser, Content: fmt.Sprintf("I keep %d orange kites in the attic", i)}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("the deleted user's turns stored", func() bool { return turns("gone") == 3 })

	// Ingest and the two operator commands at once.
	var wg sync.WaitGroup
	ingestErr := make(chan error, 1)
	wg.Go(func() {
		for i := range liveTurns {
			if _, err := c.AddTurns(ctx, client.Turn{TurnID: fmt.Sprintf("live-%d", i), UserID: "live", SessionID: "s1",
				Role: client.RoleUser, Content: fmt.Sprintf("I bought %d blue notebooks today", i)}); err != nil {
				ingestErr <- err
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	type result struct {
		args []string
		out  string
		err  error
	}
	results := make(chan result, 2)
	for _, args := range [][]string{{"dlq", "replay", "--all", "--json"}, {"users", "delete", "--tenant", tenant, "gone"}} {
		wg.Go(func() {
			out, err := engramCmd(ctx, t, env, args...).CombinedOutput()
			results <- result{args, string(out), err}
		})
	}
	wg.Wait()
	close(results)
	select {
	case err := <-ingestErr:
		t.Fatalf("ingest: %v", err)
	default:
	}
	for r := range results {
		if r.err != nil {
			t.Errorf("engram %s: %v\n%s", strings.Join(r.args, " "), r.err, r.out)
		}
		if strings.Contains(r.out, rebuildMarker) {
			t.Errorf("engram %s rebuilt stream state:\n%s", strings.Join(r.args, " "), r.out)
		}
		if !strings.Contains(r.out, "joining the NATS server of the running engram") {
			t.Errorf("engram %s did not join serve's NATS server:\n%s", strings.Join(r.args, " "), r.out)
		}
		if r.args[0] == "dlq" && !strings.Contains(r.out, fmt.Sprintf(`"replayed": %d`, deadLetters)) {
			t.Errorf("dlq replay did not replay %d dead letters:\n%s", deadLetters, r.out)
		}
	}

	waitFor("every live and replayed turn stored", func() bool {
		return turns("live") == liveTurns && turns("replayed") == deadLetters
	})
	if n := turns("gone"); n != 0 {
		t.Errorf("the deleted user still has %d turns", n)
	}
	if n := pgtest.Count(t, pool, tenant, "SELECT count(*) FROM memories WHERE user_id = 'gone'"); n != 0 {
		t.Errorf("the deleted user still has %d memories", n)
	}

	// A second serve on the same store is refused, naming the holder.
	second := engramCmd(ctx, t, map[string]string{
		"ENGRAM_DATABASE_URL": dbURL, "ENGRAM_DATA_DIR": dataDir, "ENGRAM_NATS_PORT": strconv.Itoa(freeLoopbackPort(t)),
		"ENGRAM_HTTP_ADDR": "127.0.0.1:0", "ENGRAM_TOKENS": env["ENGRAM_TOKENS"], "ENGRAM_CONSOLIDATE_CRON": "off", "ENGRAM_REEMBED": "off",
	}, "serve")
	out, err := second.CombinedOutput()
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) || exitErr.ExitCode() != 1 {
		t.Errorf("second serve: %v, want exit status 1\n%s", err, out)
	}
	if want := fmt.Sprintf("in use by process %d (engram serve", serve.Process.Pid); !strings.Contains(string(out), want) {
		t.Errorf("second serve's error does not name the holder (%q):\n%s", want, out)
	}

	// After all this, the turns are still exactly once in the database, and the
	// stream state was never rebuilt.
	if turns("live") != liveTurns || turns("replayed") != deadLetters {
		t.Errorf("turns: live %d (want %d), replayed %d (want %d)", turns("live"), liveTurns, turns("replayed"), deadLetters)
	}
	stopServe()
	if strings.Contains(serveLog.String(), rebuildMarker) {
		t.Errorf("serve's log shows rebuilt stream state:\n%s", serveLog.String())
	}
}

// seedDeadLetters dead-letters n turns of user in the store at storeDir, through an
// extractor worker that rejects every turn, then releases the store.
func seedDeadLetters(ctx context.Context, t *testing.T, storeDir, tenant, user string, n int) {
	t.Helper()
	srv, err := natsserver.Start(ctx, natsserver.Config{StoreDir: storeDir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		t.Fatal(err)
	}
	w, err := streams.NewWorker(js, streams.WorkerConfig{
		Stream: streams.TurnsStream, Durable: streams.ExtractorConsumer,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, func(context.Context, *streams.Msg) error {
		return streams.Permanent(errors.New("extractor unavailable in this test"))
	})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	for i := range n {
		ev := streams.TurnEvent{Tenant: tenant, Turn: memory.Turn{TurnID: fmt.Sprintf("%s-%d", user, i), UserID: user,
			SessionID: "s1", Role: memory.RoleUser, Content: fmt.Sprintf("I water %d ferns every Sunday", i)}}
		if _, err := streams.PublishTurn(ctx, js, ev); err != nil {
			t.Fatal(err)
		}
	}
	for w.Stats().DeadLettered < int64(n) {
		if ctx.Err() != nil {
			t.Fatal("the dead letters never appeared")
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// waitReady waits until base/readyz answers 200, failing if the process exits.
func waitReady(ctx context.Context, t *testing.T, base string, exited <-chan error, log *lockedBuffer) {
	t.Helper()
	for {
		select {
		case err := <-exited:
			t.Fatalf("engram exited before it was ready: %v\n%s", err, log.String())
		default:
		}
		if resp, err := http.Get(base + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("engram never became ready\n%s", log.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}
