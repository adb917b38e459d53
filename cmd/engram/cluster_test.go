package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/tcpproxy"
	"github.com/engramhq/engram/memory/pgtest"
	"github.com/engramhq/engram/streams"
)

// cluster is three nats-server nodes clustered on loopback, each with its own
// JetStream file store; a node can be shut down and restarted on the same ports and
// store, as a crashed pod comes back.
type cluster struct {
	t     *testing.T
	mu    sync.Mutex
	opts  []*server.Options
	nodes []*server.Server
}

func loopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startCluster starts the three nodes on free loopback ports. A free port is only
// known free when it is picked: a parallel test may take it before the node listens,
// and the node then never becomes ready. Such an attempt is shut down and the cluster
// started again on other ports.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	const attempts = 3
	for attempt := 1; ; attempt++ {
		c, err := tryStartCluster(t)
		if err == nil {
			t.Cleanup(func() {
				for i := range 3 {
					c.stop(i)
				}
			})
			return c
		}
		if attempt == attempts {
			t.Fatalf("starting a three-node cluster (%d attempts): %v", attempts, err)
		}
		t.Logf("starting a three-node cluster: %v; again on other ports", err)
	}
}

func tryStartCluster(t *testing.T) (*cluster, error) {
	t.Helper()
	c := &cluster{t: t}
	clientPorts := []int{loopbackPort(t), loopbackPort(t), loopbackPort(t)}
	routePorts := []int{loopbackPort(t), loopbackPort(t), loopbackPort(t)}
	var routes []string
	for _, p := range routePorts {
		routes = append(routes, "nats-route://127.0.0.1:"+strconv.Itoa(p))
	}
	for i := range 3 {
		o := &server.Options{
			ServerName: "n" + strconv.Itoa(i),
			Host:       "127.0.0.1",
			Port:       clientPorts[i],
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoLog:      true,
			NoSigs:     true,
			Cluster: server.ClusterOpts{
				Name: "engram", Host: "127.0.0.1", Port: routePorts[i],
			},
			Routes:             server.RoutesFromStr(strings.Join(routes, ",")),
			JetStreamMaxMemory: 128 << 20,
			JetStreamMaxStore:  1 << 30,
		}
		c.opts = append(c.opts, o)
		c.nodes = append(c.nodes, nil)
	}
	for i := range 3 {
		if err := c.launch(i); err != nil {
			for j := range 3 {
				c.stop(j)
			}
			return nil, err
		}
	}
	return c, nil
}

// start starts node i again on its ports and store (a restart in a test).
func (c *cluster) start(i int) {
	c.t.Helper()
	if err := c.launch(i); err != nil {
		c.t.Fatal(err)
	}
}

func (c *cluster) launch(i int) error {
	srv, err := server.NewServer(c.opts[i])
	if err != nil {
		return fmt.Errorf("node %d: %w", i, err)
	}
	srv.Start()
	if !srv.ReadyForConnections(20 * time.Second) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return fmt.Errorf("node %d not ready (client port %d, route port %d)", i, c.opts[i].Port, c.opts[i].Cluster.Port)
	}
	c.mu.Lock()
	c.nodes[i] = srv
	c.mu.Unlock()
	return nil
}

func (c *cluster) stop(i int) {
	c.mu.Lock()
	srv := c.nodes[i]
	c.nodes[i] = nil
	c.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// logJetStream says what each running node knows of the cluster when a test is stuck:
// the meta group's leader and peers, and each stream's and consumer's leader and
// replicas (current, offline, lag), as seen from that node.
func (c *cluster) logJetStream(t *testing.T) {
	t.Helper()
	c.mu.Lock()
	nodes := append([]*server.Server(nil), c.nodes...)
	c.mu.Unlock()
	peers := func(ci *server.ClusterInfo) string {
		if ci == nil {
			return "no cluster info"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "leader %q", ci.Leader)
		for _, p := range ci.Replicas {
			fmt.Fprintf(&b, "; %s current=%v offline=%v lag=%d active=%s", p.Name, p.Current, p.Offline, p.Lag, p.Active.Round(time.Millisecond))
		}
		return b.String()
	}
	for i, srv := range nodes {
		if srv == nil {
			t.Logf("node n%d: down", i)
			continue
		}
		jsz, err := srv.Jsz(&server.JSzOptions{Accounts: true, Streams: true, Consumer: true})
		if err != nil {
			t.Logf("node n%d: jsz: %v", i, err)
			continue
		}
		if m := jsz.Meta; m != nil {
			t.Logf("node n%d: meta %s, size %d, quorum %d, pending %d", i, peers(&server.ClusterInfo{Leader: m.Leader, Replicas: m.Replicas}), m.Size, m.QuorumNeeded, m.Pending)
		}
		for _, a := range jsz.AccountDetails {
			for _, sd := range a.Streams {
				t.Logf("node n%d: stream %s (%d msgs, last seq %d): %s", i, sd.Name, sd.State.Msgs, sd.State.LastSeq, peers(sd.Cluster))
				for _, ci := range sd.Consumer {
					t.Logf("node n%d: consumer %s/%s (ack pending %d, pending %d, delivered %d, ack floor %d): %s", i, sd.Name, ci.Name,
						ci.NumAckPending, ci.NumPending, ci.Delivered.Stream, ci.AckFloor.Stream, peers(ci.Cluster))
				}
			}
		}
	}
}

// URL lists every node, so clients fail over.
func (c *cluster) URL() string {
	var urls []string
	for _, o := range c.opts {
		urls = append(urls, "nats://127.0.0.1:"+strconv.Itoa(o.Port))
	}
	return strings.Join(urls, ",")
}

func (c *cluster) index(name string) int {
	for i, o := range c.opts {
		if o.ServerName == name {
			return i
		}
	}
	return -1
}

// waitMeta waits until the cluster has a JetStream meta leader (EnsureTopology needs one).
func (c *cluster) waitMeta(ctx context.Context) error {
	nc, err := nats.Connect(c.URL())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	for {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := js.AccountInfo(actx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no JetStream meta leader: %w (last: %v)", ctx.Err(), err)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// clusterTurns is how many turns TestJetStreamClusterFailover sends: 1,000 by default
// (part of `make test`), ENGRAM_CLUSTER_TURNS for the full run (10,000).
func clusterTurns(t *testing.T) int {
	if v := os.Getenv("ENGRAM_CLUSTER_TURNS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 10 {
			t.Fatalf("ENGRAM_CLUSTER_TURNS=%q: want an integer ≥ 10", v)
		}
		return n
	}
	if testing.Short() {
		return 200
	}
	return 1000
}

// fault is what a failover test does to a dependency mid-ingest.
type fault struct {
	name    string
	kill    func(ctx context.Context, app *App) error // at a third of the turns
	restart func() error                              // at two thirds, once the outage lasted failoverOutage
}

// TestJetStreamClusterFailover: engram on a three-node JetStream cluster with R3
// streams. Turns go through POST /v1/turns with the workers running; the TURNS
// stream's leader is shut down a third of the way through and restarted at two
// thirds. Afterwards every turn that got a 202 is stored exactly once and every
// extracted memory exists exactly once (one user per turn, one memory per user), and
// the workers got there on their own.
func TestJetStreamClusterFailover(t *testing.T) {
	t.Parallel()
	var cl *cluster
	leader := -1
	runFailover(t, func(ctx context.Context, c *cluster) { cl = c }, nil, fault{
		name: "the TURNS stream leader",
		kill: func(ctx context.Context, app *App) error {
			st, err := app.JS.Stream(ctx, streams.TurnsStream)
			if err != nil {
				return err
			}
			si, err := st.Info(ctx)
			if err != nil || si.Cluster == nil {
				return fmt.Errorf("reading the TURNS leader: %v", err)
			}
			if leader = cl.index(si.Cluster.Leader); leader < 0 {
				return fmt.Errorf("leader %q is not a node", si.Cluster.Leader)
			}
			t.Logf("shutting down %s, the TURNS leader", si.Cluster.Leader)
			cl.stop(leader)
			return nil
		},
		restart: func() error {
			cl.start(leader)
			return nil
		},
	})
}

// TestPostgresRestartMidIngest: the same on the three-node cluster, with PostgreSQL
// unreachable for a few seconds mid-ingest. The shared PostgreSQL of the test machine
// is not stopped: engram reaches it through a loopback TCP proxy that the test closes
// (refusing new connections and cutting every open one, as a restart does) and
// reopens on the same port.
func TestPostgresRestartMidIngest(t *testing.T) {
	t.Parallel()
	var px *tcpproxy.Proxy
	runFailover(t, nil, func(url string) string {
		var err error
		px, url, err = tcpproxy.URL(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(px.Close)
		return url
	}, fault{
		name: "PostgreSQL",
		kill: func(context.Context, *App) error {
			t.Logf("stopping PostgreSQL (the proxy)")
			px.Cut()
			return nil
		},
		restart: func() error { return px.Restore() },
	})
}

// failoverOutage is the least time a fault lasts.
const failoverOutage = 3 * time.Second

func runFailover(t *testing.T, onCluster func(context.Context, *cluster), dbURL func(string) string, f fault) {
	total := clusterTurns(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cl := startCluster(t)
	if onCluster != nil {
		onCluster(ctx, cl)
	}
	if err := cl.waitMeta(ctx); err != nil {
		t.Fatal(err)
	}
	url := pgtest.URL(t)
	if dbURL != nil {
		url = dbURL(url)
	}
	cfg, err := LoadConfig(envMap(map[string]string{
		"ENGRAM_DATABASE_URL": url, "ENGRAM_NATS_URL": cl.URL(), "ENGRAM_HTTP_ADDR": "127.0.0.1:0",
		"ENGRAM_DATA_DIR": t.TempDir(), "ENGRAM_DB_MAX_CONNS": "24", "ENGRAM_STREAM_REPLICAS": "3",
		"ENGRAM_CONSOLIDATE_CRON": "off",
	}))
	if err != nil {
		t.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() && os.Getenv("ENGRAM_CLUSTER_LOG") != "" {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	app := &App{Config: cfg, Logger: logger}
	t.Cleanup(app.Close)
	if err := app.openDB(ctx, true); err != nil {
		t.Fatal(err)
	}
	if err := app.openNATS(ctx, false); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{streams.TurnsStream, streams.CandidatesStream, streams.DLQStream} {
		st, err := app.JS.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if r := st.CachedInfo().Config.Replicas; r != 3 {
			t.Fatalf("stream %s has %d replicas, want 3", name, r)
		}
	}
	n, tok := startTestNode(t, ctx, app)
	c := client.New(n.URL, tok, client.WithRetry(client.Retry{MaxElapsedTime: time.Minute}))

	// One user per turn, each stating one preference: the offline extractor makes one
	// candidate of it and the resolver one memory, whatever the redeliveries.
	const perRequest = 20
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	var sent, accepted, retried atomic.Int64
	var killed, restarted atomic.Bool
	var killedAt time.Time
	started := time.Now()
	batches := make(chan []client.Turn)
	go func() {
		defer close(batches)
		for start := 0; start < total; start += perRequest {
			var b []client.Turn
			for i := start; i < min(start+perRequest, total); i++ {
				b = append(b, client.Turn{TurnID: fmt.Sprintf("turn-%06d", i), UserID: fmt.Sprintf("user-%06d", i),
					SessionID: "s", Role: client.RoleUser, OccurredAt: at.Add(time.Duration(i) * time.Second),
					Content: fmt.Sprintf("I prefer tea number %d with my breakfast", i)})
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	var restartWG sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for b := range batches {
				for {
					res, err := c.AddTurns(ctx, b...)
					if err == nil && res.Accepted+res.Duplicates == len(b) {
						accepted.Add(int64(len(b)))
						break
					}
					if ctx.Err() != nil {
						errs <- fmt.Errorf("sending turns: %v", err)
						return
					}
					retried.Add(1) // the SDK gave up on this request: send it again, same ids
					time.Sleep(200 * time.Millisecond)
				}
				s := sent.Add(int64(len(b)))
				switch {
				case s >= int64(total)/3 && killed.CompareAndSwap(false, true):
					t.Logf("fault on %s after %d turns", f.name, s)
					killedAt = time.Now()
					if err := f.kill(ctx, app); err != nil {
						errs <- err
						return
					}
				case s >= 2*int64(total)/3 && killed.Load() && restarted.CompareAndSwap(false, true):
					// The restart waits out the least outage without holding up the sender.
					wait := time.Until(killedAt.Add(failoverOutage))
					restartWG.Go(func() {
						time.Sleep(wait)
						t.Logf("%s back after %d turns, %s down", f.name, sent.Load(), time.Since(killedAt).Round(time.Millisecond))
						if err := f.restart(); err != nil {
							errs <- err
						}
					})
				}
			}
		})
	}
	wg.Wait()
	restartWG.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if !killed.Load() || !restarted.Load() {
		t.Fatalf("the fault was not cycled (killed %v, restarted %v)", killed.Load(), restarted.Load())
	}
	select {
	case err := <-n.failed:
		t.Fatalf("a worker stopped: %v", err)
	default:
	}
	ingested := time.Since(started)
	if err := drainWhileMoving(ctx, t, app.JS); err != nil {
		// Say where it is stuck: the consumers' state and the workers' counters.
		for _, s := range pipelineStages() {
			if cons, cerr := app.JS.Consumer(ctx, s.stream, s.consumer); cerr == nil {
				if ci, ierr := cons.Info(ctx); ierr == nil {
					t.Logf("%s/%s: pending %d, ack pending %d, redelivered %d, waiting %d, delivered %+v, ack floor %+v, leader %v",
						s.stream, s.consumer, ci.NumPending, ci.NumAckPending, ci.NumRedelivered, ci.NumWaiting, ci.Delivered, ci.AckFloor, ci.Cluster)
				} else {
					t.Logf("%s/%s: %v", s.stream, s.consumer, ierr)
				}
			} else {
				t.Logf("%s/%s: %v", s.stream, s.consumer, cerr)
			}
		}
		t.Logf("extractor %+v", n.p.extract.Stats())
		cl.logJetStream(t)
		for len(n.failed) > 0 {
			t.Logf("node failure: %v", <-n.failed)
		}
		logStuck(t, url)
		t.Fatal(err)
	}
	turns := pgtest.Count(t, app.Pool, "t1", "SELECT count(*) FROM turns")
	distinctTurns := pgtest.Count(t, app.Pool, "t1", "SELECT count(DISTINCT turn_id) FROM turns")
	memories := pgtest.Count(t, app.Pool, "t1", "SELECT count(*) FROM memories")
	users := pgtest.Count(t, app.Pool, "t1", "SELECT count(DISTINCT user_id) FROM memories")
	dupContent := pgtest.Count(t, app.Pool, "t1",
		"SELECT count(*) FROM (SELECT user_id, content FROM memories GROUP BY 1, 2 HAVING count(*) > 1) d")
	ledger := pgtest.Count(t, app.Pool, "t1", "SELECT count(*) FROM applied_candidates")
	dlq, err := app.JS.Stream(ctx, streams.DLQStream)
	if err != nil {
		t.Fatal(err)
	}
	dinfo, err := dlq.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	st := n.p.extract.Stats()
	t.Logf("turns: %d sent in %s, %d acknowledged (202), %d requests resent after the SDK gave up; stored %d (%d distinct); "+
		"memories %d for %d users, %d duplicated contents, ledger %d; DLQ %d; extractor saw %d deliveries, %d already stored; %s in all",
		total, ingested.Round(time.Millisecond), accepted.Load(), retried.Load(), turns, distinctTurns, memories, users, dupContent, ledger,
		dinfo.State.Msgs, st.TurnsReceived, st.TurnsRedelivered, time.Since(started).Round(time.Millisecond))
	if accepted.Load() != int64(total) || turns != total || distinctTurns != total {
		t.Errorf("turns: %d acknowledged, %d stored (%d distinct), want %d", accepted.Load(), turns, distinctTurns, total)
	}
	if memories != total || users != total || dupContent != 0 {
		t.Errorf("memories: %d for %d users with %d duplicated contents, want %d, one per user", memories, users, dupContent, total)
	}
	if dinfo.State.Msgs != 0 {
		t.Errorf("%d dead letters", dinfo.State.Msgs)
	}
}

// drainStall is how long the failover tests' pipeline may go without its consumers'
// state changing before the drain is taken as stuck; drainLimit bounds the drain.
const (
	drainStall = 90 * time.Second
	drainLimit = 6 * time.Minute
)

// consumerState is what moves while a consumer works through its stream: a held
// message keeps the ack floor where it is while later ones are delivered and acked.
type consumerState struct {
	delivered, ackFloor uint64
	pending             uint64
	ackPending          int
}

// drainWhileMoving waits for the pipeline to drain (waitDrained) for as long as it
// keeps moving: on a loaded machine under the race detector a drain that progresses
// can take minutes, and a stuck one is told by its consumers' state standing still
// for drainStall, not by a fixed time.
func drainWhileMoving(ctx context.Context, t *testing.T, js jetstream.JetStream) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, drainLimit)
	defer cancel()
	last := make([]consumerState, len(pipelineStages())) // nothing delivered yet
	for {
		sctx, scancel := context.WithTimeout(ctx, drainStall)
		err := waitDrained(sctx, js)
		scancel()
		if err == nil || ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		var now []consumerState
		read := true
		for _, s := range pipelineStages() {
			rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
			ci, ierr := consumerInfo(rctx, js, s.stream, s.consumer)
			rcancel()
			if ierr != nil && ctx.Err() == nil && streams.IsOutage(ierr) {
				read = false // unanswered or 503: read again after the next wait (drainLimit bounds it)
				break
			}
			if ierr != nil {
				return errors.Join(err, fmt.Errorf("reading consumer %s: %w", s.consumer, ierr))
			}
			now = append(now, consumerState{delivered: ci.Delivered.Stream, ackFloor: ci.AckFloor.Stream,
				pending: ci.NumPending, ackPending: ci.NumAckPending})
		}
		if !read {
			t.Logf("still draining after %s more; the consumers' state unread", drainStall)
			continue
		}
		if slices.Equal(now, last) {
			return fmt.Errorf("the consumers did not move in %s (%+v): %w", drainStall, now, err)
		}
		t.Logf("still draining after %s more: consumers %+v (were %+v)", drainStall, now, last)
		last = now
	}
}

// logStuck says where a pipeline that stopped draining waits: the database's sessions
// (state, wait event, open transaction, statement), on a connection of its own since
// the pool may be what is exhausted, and this process's goroutines by stack.
func logStuck(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if conn, err := pgx.Connect(ctx, url); err != nil {
		t.Logf("sessions: connecting: %v", err)
	} else {
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, `SELECT pid, coalesce(state, ''), coalesce(wait_event_type || '/' || wait_event, ''),
			coalesce((now() - xact_start)::text, ''), left(regexp_replace(query, '\s+', ' ', 'g'), 160)
			FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() ORDER BY xact_start NULLS LAST`)
		if err == nil {
			var pid int
			var state, wait, xact, query string
			var tag pgconn.CommandTag
			tag, err = pgx.ForEachRow(rows, []any{&pid, &state, &wait, &xact, &query}, func() error {
				t.Logf("session %d: %s, waiting %q, transaction for %s: %s", pid, state, wait, xact, query)
				return nil
			})
			t.Logf("%d other sessions on the database", tag.RowsAffected())
		}
		if err != nil {
			t.Logf("sessions: %v", err)
		}
	}
	var b strings.Builder
	if err := pprof.Lookup("goroutine").WriteTo(&b, 1); err == nil {
		t.Logf("goroutines:\n%s", b.String())
	}
}
