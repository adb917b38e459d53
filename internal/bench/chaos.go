package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/engramhq/engram/client"
	"github.com/engramhq/engram/internal/httpapi"
	"github.com/engramhq/engram/internal/natsserver"
	"github.com/engramhq/engram/internal/tcpproxy"
	"github.com/engramhq/engram/memory"
	"github.com/engramhq/engram/streams"
)

// Defaults of ChaosConfig.
const (
	DefaultChaosTurns    = 10_000
	DefaultChaosOutage   = 20 * time.Second
	DefaultChaosNATSDown = 5 * time.Second
)

// The faults a chaos run injects, in this order, spread evenly over the sending.
const (
	FaultKillWorker = "kill-worker" // SIGKILL the worker process, start it again
	FaultPostgres   = "postgres"    // cut PostgreSQL (the proxy) for Outage, then restore it
	FaultNATS       = "nats"        // shut the NATS server down for NATSDown, start it on the same store
	FaultModel      = "model"       // the embedding endpoint fails (500, 429, wrong dims, dropped) for Outage
)

// ChaosFaults lists every fault, in the order a run injects them.
var ChaosFaults = []string{FaultKillWorker, FaultPostgres, FaultNATS, FaultModel}

// ChaosConfig configures RunChaos.
type ChaosConfig struct {
	// Binary is the engram executable started as the API and the worker processes.
	Binary string
	// DatabaseURL is the PostgreSQL database the processes migrate and write, reached
	// through a proxy the run cuts. Use a private database: the run adds a tenant
	// "chaos-<random>" with Turns users.
	DatabaseURL string
	// WorkDir holds the run's NATS store, the processes' data directories and logs.
	WorkDir string
	// Turns to send, one user each stating one preference. Default 10,000.
	Turns int
	// Outage is how long PostgreSQL is cut and the model endpoint is faulty. Default 20s,
	// more than the 15 s of redeliveries after which the old worker runtime dead-lettered.
	Outage time.Duration
	// NATSDown is how long the NATS server stays down. Default 5s.
	NATSDown time.Duration
	// Faults to inject (of ChaosFaults), in that order. Default all; a fault named
	// twice is injected twice.
	Faults []string
	// OutageBackoffMax is the processes' ENGRAM_OUTAGE_BACKOFF_MAX. Default 2s.
	OutageBackoffMax time.Duration
	// Progress receives a line per stage; nil discards.
	Progress io.Writer
	// Logger receives the run's warnings; nil discards.
	Logger *slog.Logger
}

// ChaosFault is one injected fault.
type ChaosFault struct {
	Name      string        `json:"name"`
	AfterSent int           `json:"after_sent"` // turns acknowledged when it began
	Down      time.Duration `json:"down_ns"`    // how long the dependency was out
}

// ChaosResult is what a chaos run measured. OK is the verdict: every turn stored once,
// every user with exactly one memory, no dead letter.
type ChaosResult struct {
	Tenant          string        `json:"tenant"`
	Turns           int           `json:"turns"`
	Accepted        int           `json:"accepted"`        // turns the API acknowledged (202, new or duplicate)
	Resent          int           `json:"resent_requests"` // requests sent again after the SDK gave up
	StoredTurns     int           `json:"stored_turns"`    // turn rows
	DistinctTurns   int           `json:"distinct_turns"`  // distinct turn ids among them
	UsersWithMemory int           `json:"users_with_memory"`
	Memories        int           `json:"memories"`
	Lost            int           `json:"lost"`       // users without their memory
	Duplicated      int           `json:"duplicated"` // extra memories plus extra turn rows
	DeadLetters     int           `json:"dead_letters"`
	ModelRequests   int64         `json:"model_requests"`
	ModelFaults     int64         `json:"model_faults"` // requests answered with a fault
	Restarts        int           `json:"unexpected_restarts"`
	Faults          []ChaosFault  `json:"faults"`
	SendTime        time.Duration `json:"send_ns"`
	DrainTime       time.Duration `json:"drain_ns"`
	APIPeakRSS      int64         `json:"api_peak_rss_bytes"`
	WorkerPeakRSS   int64         `json:"worker_peak_rss_bytes"` // of the last worker process
	OK              bool          `json:"ok"`
}

func (c ChaosConfig) withDefaults() (ChaosConfig, error) {
	switch {
	case c.Binary == "":
		return c, errors.New("chaos: the engram binary is required")
	case c.DatabaseURL == "":
		return c, errors.New("chaos: a database URL is required")
	case c.WorkDir == "":
		return c, errors.New("chaos: a work directory is required")
	}
	// A zero field takes its default; a negative one is a mistake, not a default.
	switch {
	case c.Turns < 0:
		return c, fmt.Errorf("chaos: turns must not be negative, got %d", c.Turns)
	case c.Outage < 0:
		return c, fmt.Errorf("chaos: the outage must not be negative, got %s", c.Outage)
	case c.NATSDown < 0:
		return c, fmt.Errorf("chaos: the NATS downtime must not be negative, got %s", c.NATSDown)
	case c.OutageBackoffMax < 0:
		return c, fmt.Errorf("chaos: the outage backoff must not be negative, got %s", c.OutageBackoffMax)
	}
	if c.Turns == 0 {
		c.Turns = DefaultChaosTurns
	}
	if c.Outage <= 0 {
		c.Outage = DefaultChaosOutage
	}
	if c.NATSDown <= 0 {
		c.NATSDown = DefaultChaosNATSDown
	}
	if c.OutageBackoffMax <= 0 {
		c.OutageBackoffMax = 2 * time.Second
	}
	if c.Faults == nil {
		c.Faults = ChaosFaults
	}
	for _, f := range c.Faults {
		if !slices.Contains(ChaosFaults, f) {
			return c, fmt.Errorf("chaos: unknown fault %q (want %s)", f, strings.Join(ChaosFaults, ", "))
		}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// chaosRun is one run's moving parts.
type chaosRun struct {
	cfg    ChaosConfig
	tenant string
	token  string
	env    []string

	proxy *tcpproxy.Proxy
	model *faultyModel

	natsMu   sync.Mutex
	nats     *natsserver.Server
	natsPort int

	api, worker *process
	restarts    atomic.Int32
}

// RunChaos starts the engram API and worker as processes against a private NATS server,
// PostgreSQL behind a cuttable proxy and a faulty embedding endpoint; sends cfg.Turns
// turns while injecting the faults; waits until everything is processed; and counts
// what was lost, duplicated or dead-lettered.
func RunChaos(ctx context.Context, cfg ChaosConfig) (ChaosResult, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return ChaosResult{}, err
	}
	r := &chaosRun{cfg: cfg}
	defer r.close()
	if err := r.start(ctx); err != nil {
		return ChaosResult{}, err
	}
	res := ChaosResult{Tenant: r.tenant, Turns: cfg.Turns}
	if err := r.send(ctx, &res); err != nil {
		return res, err
	}
	r.progress("sent %d turns in %s; waiting for the workers to drain", res.Accepted, res.SendTime.Round(time.Millisecond))
	start := time.Now()
	if err := r.drain(ctx); err != nil {
		return res, err
	}
	res.DrainTime = time.Since(start)
	if err := r.count(ctx, &res); err != nil {
		return res, err
	}
	res.APIPeakRSS, res.WorkerPeakRSS = r.api.peakRSS(), r.worker.peakRSS()
	res.ModelRequests, res.ModelFaults = r.model.requests.Load(), r.model.faults.Load()
	res.Restarts = int(r.restarts.Load())
	res.OK = res.Lost == 0 && res.Duplicated == 0 && res.DeadLetters == 0 &&
		res.StoredTurns == cfg.Turns && res.Accepted == cfg.Turns
	return res, nil
}

func (r *chaosRun) progress(format string, args ...any) {
	fmt.Fprintf(r.cfg.Progress, "chaos: "+format+"\n", args...)
}

func (r *chaosRun) start(ctx context.Context) error {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return err
	}
	r.tenant = "chaos-" + hex.EncodeToString(b[:])
	tok, err := httpapi.NewToken()
	if err != nil {
		return err
	}
	r.token = tok
	if err := os.MkdirAll(r.cfg.WorkDir, 0o750); err != nil {
		return fmt.Errorf("chaos: creating the work directory: %w", err)
	}
	u, err := url.Parse(r.cfg.DatabaseURL)
	if err != nil || u.Host == "" {
		return fmt.Errorf("chaos: database URL %q has no host", r.cfg.DatabaseURL)
	}
	if r.proxy, err = tcpproxy.New(u.Host); err != nil {
		return err
	}
	u.Host = r.proxy.Addr()
	if r.model, err = startFaultyModel(); err != nil {
		return err
	}
	if err := r.startNATS(ctx, -1); err != nil {
		return err
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return err
	}
	r.env = []string{
		"ENGRAM_DATABASE_URL=" + u.String(),
		"ENGRAM_NATS_URL=" + r.natsURL(),
		"ENGRAM_TOKENS=" + r.tenant + "=" + httpapi.HashToken(tok),
		"ENGRAM_EMBED_BASE_URL=" + r.model.URL(), "ENGRAM_EMBED_MODEL=chaos-embed",
		"ENGRAM_EMBED_DIMS=" + strconv.Itoa(chaosDims),
		"ENGRAM_CONSOLIDATE_CRON=off", "ENGRAM_WORKER_HTTP_ADDR=off", "ENGRAM_LOG_LEVEL=warn",
		"ENGRAM_OUTAGE_BACKOFF_MAX=" + r.cfg.OutageBackoffMax.String(),
	}
	r.api = &process{name: "api", bin: r.cfg.Binary, args: []string{"serve", "--workers=false", "--http-addr", apiAddr},
		env: append(slices.Clone(r.env), "ENGRAM_DATA_DIR="+filepath.Join(r.cfg.WorkDir, "api")),
		log: filepath.Join(r.cfg.WorkDir, "api.log"), onExit: r.unexpectedExit}
	r.worker = &process{name: "worker", bin: r.cfg.Binary, args: []string{"worker", "all"},
		env: append(slices.Clone(r.env), "ENGRAM_DATA_DIR="+filepath.Join(r.cfg.WorkDir, "worker")),
		log: filepath.Join(r.cfg.WorkDir, "worker.log"), onExit: r.unexpectedExit}
	r.progress("starting the API (%s) and the worker; logs in %s", apiAddr, r.cfg.WorkDir)
	if err := r.api.start(); err != nil {
		return err
	}
	if err := waitHealthy(ctx, "http://"+apiAddr+"/healthz", time.Minute); err != nil {
		return fmt.Errorf("chaos: the API did not come up (see %s): %w", r.api.log, err)
	}
	r.api.url = "http://" + apiAddr
	return r.worker.start() // after the API: one process migrates at a time
}

// unexpectedExit restarts a process that died without being killed by the run, as a
// supervisor would, and counts it.
func (r *chaosRun) unexpectedExit(p *process, err error) {
	r.restarts.Add(1)
	r.cfg.Logger.Warn("chaos: process exited; restarting it", "process", p.name, "err", err)
	time.Sleep(time.Second)
	if serr := p.start(); serr != nil {
		r.cfg.Logger.Error("chaos: restarting a process failed", "process", p.name, "err", serr)
	}
}

func (r *chaosRun) startNATS(ctx context.Context, port int) error {
	s, err := natsserver.Start(ctx, natsserver.Config{StoreDir: filepath.Join(r.cfg.WorkDir, "nats"), Port: port, ServerName: "chaos"})
	if err != nil {
		return fmt.Errorf("chaos: starting NATS: %w", err)
	}
	r.natsMu.Lock()
	r.nats, r.natsPort = s, s.Port()
	r.natsMu.Unlock()
	return nil
}

func (r *chaosRun) natsURL() string { return "nats://127.0.0.1:" + strconv.Itoa(r.natsPort) }

func (r *chaosRun) close() {
	if r.worker != nil {
		r.worker.stop()
	}
	if r.api != nil {
		r.api.stop()
	}
	r.natsMu.Lock()
	if r.nats != nil {
		r.nats.Shutdown()
	}
	r.natsMu.Unlock()
	if r.model != nil {
		r.model.close()
	}
	if r.proxy != nil {
		r.proxy.Close()
	}
}

// send posts the turns from four clients while a goroutine injects the faults at even
// fractions of the turns acknowledged.
func (r *chaosRun) send(ctx context.Context, res *ChaosResult) error {
	const perRequest, clients = 50, 4
	c := client.New(r.api.url, r.token, client.WithRetry(client.Retry{MaxElapsedTime: 2 * time.Minute}))
	batches := make(chan []client.Turn)
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	go func() {
		defer close(batches)
		for start := 0; start < r.cfg.Turns; start += perRequest {
			var b []client.Turn
			for i := start; i < min(start+perRequest, r.cfg.Turns); i++ {
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
	var accepted, resent atomic.Int64
	trigger := make(chan int, len(r.cfg.Faults))
	faultsDone := make(chan []ChaosFault, 1)
	go func() { faultsDone <- r.injectFaults(ctx, trigger) }()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	start := time.Now()
	next := 0 // next fault to trigger, under mu
	var mu sync.Mutex
	for range clients {
		wg.Go(func() {
			for b := range batches {
				for {
					out, err := c.AddTurns(ctx, b...)
					if err == nil && out.Accepted+out.Duplicates == len(b) {
						break
					}
					if ctx.Err() != nil {
						errs <- fmt.Errorf("chaos: sending turns: %w", ctx.Err())
						return
					}
					resent.Add(1) // the SDK gave up: the same ids again
					time.Sleep(500 * time.Millisecond)
				}
				n := int(accepted.Add(int64(len(b))))
				mu.Lock()
				for next < len(r.cfg.Faults) && n >= (next+1)*r.cfg.Turns/(len(r.cfg.Faults)+1) {
					trigger <- n
					next++
				}
				mu.Unlock()
				if step := max(r.cfg.Turns/10, 1); (n-len(b))/step != n/step {
					r.progress("%d of %d turns acknowledged", n, r.cfg.Turns)
				}
			}
		})
	}
	wg.Wait()
	close(trigger)
	res.Faults = <-faultsDone
	res.SendTime = time.Since(start)
	res.Accepted, res.Resent = int(accepted.Load()), int(resent.Load())
	close(errs)
	for err := range errs {
		return err
	}
	if len(res.Faults) != len(r.cfg.Faults) {
		return fmt.Errorf("chaos: %d of %d faults injected", len(res.Faults), len(r.cfg.Faults))
	}
	return nil
}

// injectFaults runs the configured faults one after another, each when trigger says
// (with the number of turns acknowledged by then).
func (r *chaosRun) injectFaults(ctx context.Context, trigger <-chan int) []ChaosFault {
	var done []ChaosFault
	i := 0
	for sent := range trigger {
		if i >= len(r.cfg.Faults) {
			continue
		}
		name := r.cfg.Faults[i]
		i++
		r.progress("fault %s after %d turns", name, sent)
		start := time.Now()
		if err := r.fault(ctx, name); err != nil {
			r.cfg.Logger.Error("chaos: fault failed", "fault", name, "err", err)
			r.progress("fault %s failed: %v", name, err)
			continue
		}
		down := time.Since(start)
		r.progress("fault %s over after %s", name, down.Round(time.Millisecond))
		done = append(done, ChaosFault{Name: name, AfterSent: sent, Down: down})
	}
	return done
}

func (r *chaosRun) fault(ctx context.Context, name string) error {
	wait := func(d time.Duration) {
		select {
		case <-time.After(d):
		case <-ctx.Done():
		}
	}
	switch name {
	case FaultKillWorker:
		r.worker.kill()
		return r.worker.start()
	case FaultPostgres:
		r.proxy.Cut()
		wait(r.cfg.Outage)
		return r.proxy.Restore()
	case FaultNATS:
		r.natsMu.Lock()
		s, port := r.nats, r.natsPort
		r.natsMu.Unlock()
		s.Shutdown()
		wait(r.cfg.NATSDown)
		return r.startNATS(ctx, port)
	case FaultModel:
		r.model.faulty.Store(true)
		wait(r.cfg.Outage)
		r.model.faulty.Store(false)
		return nil
	}
	return fmt.Errorf("unknown fault %q", name)
}

// drain waits until both consumers have nothing pending or un-acked, three polls in a
// row, reading them through a NATS connection of its own.
func (r *chaosRun) drain(ctx context.Context) error {
	nc, err := nats.Connect(r.natsURL(), nats.Name("engram-chaos"), nats.MaxReconnects(-1))
	if err != nil {
		return fmt.Errorf("chaos: connecting to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(10*time.Minute + time.Duration(r.cfg.Turns)*20*time.Millisecond)
	quiet := 0
	last := time.Now()
	for quiet < 3 {
		if time.Now().After(deadline) {
			return errors.New("chaos: the workers did not drain in time")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		idle := true
		var state []string
		for _, s := range [][2]string{{streams.TurnsStream, streams.ExtractorConsumer}, {streams.CandidatesStream, streams.ResolverConsumer}} {
			rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			cons, err := js.Consumer(rctx, s[0], s[1])
			var info *jetstream.ConsumerInfo
			if err == nil {
				info, err = cons.Info(rctx)
			}
			cancel()
			if err != nil {
				idle = false
				state = append(state, s[1]+": "+err.Error())
				continue
			}
			if info.NumPending > 0 || info.NumAckPending > 0 {
				idle = false
			}
			state = append(state, fmt.Sprintf("%s pending %d, un-acked %d", s[1], info.NumPending, info.NumAckPending))
		}
		if idle {
			quiet++
		} else {
			quiet = 0
		}
		if time.Since(last) > 10*time.Second {
			r.progress("draining: %s", strings.Join(state, "; "))
			last = time.Now()
		}
	}
	return nil
}

// count reads the outcome from PostgreSQL (directly, not through the proxy) and the DLQ.
func (r *chaosRun) count(ctx context.Context, res *ChaosResult) error {
	pool, err := memory.Connect(ctx, r.cfg.DatabaseURL, 2)
	if err != nil {
		return fmt.Errorf("chaos: connecting to count: %w", err)
	}
	defer pool.Close()
	store := memory.NewStore(pool)
	if res.StoredTurns, res.DistinctTurns, err = store.TurnCounts(ctx, r.tenant); err != nil {
		return err
	}
	users, err := store.ConsoleUsers(ctx, r.tenant)
	if err != nil {
		return err
	}
	for _, u := range users {
		if u.UserID == "" {
			continue
		}
		res.UsersWithMemory++
		res.Memories += u.Total
		res.Duplicated += u.Total - 1
	}
	res.Lost = r.cfg.Turns - res.UsersWithMemory
	res.Duplicated += res.StoredTurns - res.DistinctTurns
	nc, err := nats.Connect(r.natsURL(), nats.Name("engram-chaos"))
	if err != nil {
		return fmt.Errorf("chaos: connecting to NATS: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	st, err := js.Stream(ctx, streams.DLQStream)
	if err != nil {
		return fmt.Errorf("chaos: reading the DLQ: %w", err)
	}
	info, err := st.Info(ctx)
	if err != nil {
		return fmt.Errorf("chaos: reading the DLQ: %w", err)
	}
	res.DeadLetters = int(info.State.Msgs)
	return nil
}

// process is an engram subprocess the run can kill and start again.
type process struct {
	name, bin, log string
	args, env      []string
	url            string
	onExit         func(p *process, err error) // an exit the run did not cause

	mu      sync.Mutex
	cmd     *exec.Cmd
	killing bool
	peak    int64
	exited  chan struct{}
}

func (p *process) start() error {
	f, err := os.OpenFile(p.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("chaos: opening %s: %w", p.log, err)
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env = append(withoutEngramEnv(os.Environ()), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("chaos: starting %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.killing, p.exited = cmd, false, exited
	p.mu.Unlock()
	go p.sample(cmd, exited)
	go func() {
		err := cmd.Wait()
		f.Close()
		close(exited)
		p.mu.Lock()
		expected := p.killing || p.cmd != cmd
		p.mu.Unlock()
		if !expected && p.onExit != nil {
			p.onExit(p, err)
		}
	}()
	return nil
}

// sample records the process's peak resident set (VmHWM) while it runs.
func (p *process) sample(cmd *exec.Cmd, exited <-chan struct{}) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		if hwm := vmHWM(cmd.Process.Pid); hwm > 0 {
			p.mu.Lock()
			if p.cmd == cmd {
				p.peak = max(p.peak, hwm)
			}
			p.mu.Unlock()
		}
		select {
		case <-exited:
			return
		case <-t.C:
		}
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (p *process) kill() { p.signal(syscall.SIGKILL) }

// stop asks the process to shut down (SIGTERM), then kills it after 30 s.
func (p *process) stop() {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	p.signal(syscall.SIGTERM)
	if exited == nil {
		return
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		p.kill()
	}
}

func (p *process) signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.killing = true
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(sig)
	if sig == syscall.SIGKILL {
		<-exited
	}
}

func (p *process) peakRSS() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peak
}

// vmHWM reads a process's peak resident set from /proc (0 where unavailable).
func vmHWM(pid int) int64 { return procStatusBytes(pid, "VmHWM:") }

// vmRSS reads a process's current resident set from /proc (0 where unavailable).
func vmRSS(pid int) int64 { return procStatusBytes(pid, "VmRSS:") }

// procStatusBytes reads one "<field> N kB" line of /proc/<pid>/status, in bytes.
func procStatusBytes(pid int, field string) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}

// withoutEngramEnv drops the caller's ENGRAM_* variables: the run sets its own.
func withoutEngramEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "ENGRAM_") })
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func waitHealthy(ctx context.Context, u string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
