package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/ingest"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/streams"
	"github.com/engramhq/engram/streams/natstest"
)

// The flood of `engram bench flood`: four concurrent batches of 1,000 turns of 32 KiB.
const (
	floodBatches = 4
	floodTurns   = 1000
	floodContent = 32 << 10
)

// Environment of the API child process BenchmarkPostTurnsFlood starts.
const (
	floodChildNATS  = "ENGRAM_TEST_FLOOD_NATS_URL"
	floodChildToken = "ENGRAM_TEST_FLOOD_TOKEN_SHA256"
)

// BenchmarkPostTurnsFlood sends the flood to the edge and the ingest service running in
// a child process (this test binary again, TestFloodAPIChild), publishing to JetStream
// in this process, and reports the child's peak RSS (VmHWM, what bench flood reports
// for the API) and its peak live heap. The bodies are generated as they are sent, so
// nothing of the flood is held on the client side. Run it with -benchtime=1x: VmHWM
// is a peak over the child's life. It fails when the peak RSS reaches 200 MB.
//
//	go test ./internal/httpapi/ -run '^$' -bench PostTurnsFlood -benchtime=1x
func BenchmarkPostTurnsFlood(b *testing.B) {
	srv := natstest.Start(b)
	_, js := srv.Connect(b)
	ctx := context.Background()
	if err := streams.EnsureTopology(ctx, js, streams.Config{}); err != nil {
		b.Fatal(err)
	}
	tok, err := httpapi.NewToken()
	if err != nil {
		b.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestFloodAPIChild$", "-test.v")
	child.Env = append(os.Environ(), floodChildNATS+"="+srv.URL(), floodChildToken+"="+httpapi.HashToken(tok))
	child.Stderr = os.Stderr
	stdin, err := child.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := child.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := child.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		stdin.Close() // the child exits when its stdin closes
		_ = child.Wait()
	}()
	url := ""
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "flood-api "); ok {
			url = "http://" + a
			break
		}
	}
	if url == "" {
		b.Fatal("the API child did not start")
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	for b.Loop() {
		start := time.Now()
		var resent atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, floodBatches)
		for n := range floodBatches {
			wg.Go(func() {
				for {
					status, err := postFloodBatch(ctx, url+"/v1/turns", tok, n)
					if err != nil {
						errs <- err
						return
					}
					if status == http.StatusAccepted {
						return
					}
					if status != http.StatusServiceUnavailable {
						errs <- fmt.Errorf("batch %d: status %d", n, status)
						return
					}
					resent.Add(1)
					time.Sleep(200 * time.Millisecond)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds(), "flood-s")
		b.ReportMetric(float64(resent.Load()), "resent")
	}
	resp, err := http.Get(url + "/peak-heap")
	if err != nil {
		b.Fatal(err)
	}
	var peakHeap int64
	err = json.NewDecoder(resp.Body).Decode(&peakHeap)
	resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	rss := vmHWM(b, child.Process.Pid)
	b.Logf("API peak RSS %.1f MB, peak live heap %.1f MB", float64(rss)/1e6, float64(peakHeap)/1e6)
	b.ReportMetric(float64(rss)/1e6, "api-peak-rss-MB")
	b.ReportMetric(float64(peakHeap)/1e6, "api-peak-heap-MB")
	if rss >= 200e6 {
		b.Errorf("the API's peak RSS under the flood is %d bytes, want under 200 MB", rss)
	}
	// Every turn is on the stream once.
	s, err := js.Stream(ctx, streams.TurnsStream)
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if info.State.Msgs != floodBatches*floodTurns {
		b.Errorf("%d turns on the stream, want %d", info.State.Msgs, floodBatches*floodTurns)
	}
}

// postFloodBatch sends batch n, generated while it is sent, and returns the status.
func postFloodBatch(ctx context.Context, url, tok string, n int) (int, error) {
	body := newFloodBody(n)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		return 0, err
	}
	req.ContentLength = body.size()
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("batch %d: %w", n, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// floodBody generates the JSON of one flood batch turn by turn.
type floodBody struct {
	batch, next int
	buf         bytes.Buffer
}

func newFloodBody(batch int) *floodBody {
	f := &floodBody{batch: batch}
	f.buf.WriteString(`{"turns":[`)
	return f
}

var floodText = func() string {
	base := "I prefer the quiet coach on the morning train. "
	filler := strings.Repeat("build step 42 finished with status ok, cache hit, 0 warnings; ", floodContent/62+1)
	return (base + filler)[:floodContent]
}()

func floodTurn(batch, i int) []byte {
	n := batch*floodTurns + i
	t, _ := json.Marshal(map[string]string{"turn_id": fmt.Sprintf("flood-%06d", n), "user_id": fmt.Sprintf("fu-%03d", n%50),
		"session_id": fmt.Sprintf("fs-%03d", n%50), "role": "user", "content": floodText,
		"occurred_at": time.Date(2026, 2, 2, 9, 0, 0, 0, time.UTC).Add(time.Duration(n) * time.Second).Format(time.RFC3339)})
	return t
}

func (f *floodBody) size() int64 {
	n := int64(len(`{"turns":[]}`)) + floodTurns - 1
	for i := range floodTurns {
		n += int64(len(floodTurn(f.batch, i)))
	}
	return n
}

func (f *floodBody) Read(p []byte) (int, error) {
	for f.buf.Len() < len(p) && f.next <= floodTurns {
		switch {
		case f.next == floodTurns:
			f.buf.WriteString("]}")
		case f.next > 0:
			f.buf.WriteByte(',')
			fallthrough
		default:
			f.buf.Write(floodTurn(f.batch, f.next))
		}
		f.next++
	}
	if f.buf.Len() == 0 {
		return 0, io.EOF
	}
	return f.buf.Read(p)
}

// vmHWM reads a process's peak resident set from /proc.
func vmHWM(tb testing.TB, pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		tb.Skipf("no /proc: %v", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				tb.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	tb.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// TestFloodAPIChild is the API process of BenchmarkPostTurnsFlood; run on its own it
// skips. It serves the edge with the ingest service as `engram serve` wires them, plus
// GET /peak-heap (its peak live heap, sampled every 5 ms), and exits when stdin closes.
func TestFloodAPIChild(t *testing.T) {
	natsURL := os.Getenv(floodChildNATS)
	if natsURL == "" {
		t.Skip("the API process of BenchmarkPostTurnsFlood")
	}
	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := httpapi.NewTokens([]httpapi.TokenEntry{{Tenant: "flood", SHA256: os.Getenv(floodChildToken)}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := ingest.NewService(ingest.Config{Publisher: js, Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	var peak atomic.Uint64
	stop := make(chan struct{})
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	defer close(stop)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /peak-heap", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(peak.Load())
	})
	mux.Handle("/", httpapi.New(httpapi.Config{Tokens: tokens, Turns: svc, Logger: quietLogger()}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	fmt.Printf("flood-api %s\n", ln.Addr())
	_, _ = io.Copy(io.Discard, os.Stdin)
}
