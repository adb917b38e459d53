package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engramhq/engram/streams"
	"github.com/nats-io/nats.go/jetstream"
)

const dlqUsage = `Usage: engram dlq <command> [flags]

Inspect, replay and purge dead letters (messages a worker gave up on).

Commands:
  list     list dead letters, oldest first
  show     show one dead letter with its headers and payload
  replay   republish dead letters to their original subjects and remove them
  purge    delete dead letters

Run "engram dlq <command> --help" for a command's flags.
`

// dlqCommand runs "engram dlq ...". args excludes "dlq" itself.
func dlqCommand(ctx context.Context, js jetstream.JetStream, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, dlqUsage)
		return usagef("dlq: missing command (list, show, replay, purge)")
	}
	d := streams.NewDLQ(js)
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "list":
		return dlqList(ctx, d, rest, stdout, stderr)
	case "show":
		return dlqShow(ctx, d, rest, stdout, stderr)
	case "replay":
		return dlqReplay(ctx, d, rest, stdout, stderr)
	case "purge":
		return dlqPurge(ctx, d, rest, stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, dlqUsage)
		return nil
	default:
		fmt.Fprint(stderr, dlqUsage)
		return usagef("dlq: unknown command %q (want list, show, replay, purge)", cmd)
	}
}

func newDLQFlagSet(name, usage string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("engram dlq "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	return fs
}

// handled turns --help into success; other parse errors already name the flag.
func handled(cmd string, err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return fmt.Errorf("dlq %s: %w", cmd, err)
}

// timeFlag accepts an RFC 3339 time or a duration back from now ("36h", "7d").
type timeFlag struct {
	t   time.Time
	now func() time.Time
}

func (f *timeFlag) String() string {
	if f == nil || f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f *timeFlag) Set(s string) error {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		f.t = t
		return nil
	}
	d, err := parseAge(s)
	if err != nil {
		return errors.New("want a duration such as 24h or 7d, or an RFC 3339 time")
	}
	f.t = f.now().Add(-d)
	return nil
}

func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(days, 64)
		// NaN and Inf parse, and a count past a Duration's 292 years converts to
		// whatever the machine makes of it (a NaN purge could remove every entry).
		if err != nil || !(n >= 0) || n*float64(24*time.Hour) > float64(math.MaxInt64) {
			return 0, fmt.Errorf("bad day count %q", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return d, nil
}

// idsFlag collects repeated --id values.
type idsFlag []uint64

func (f *idsFlag) String() string { return fmt.Sprint([]uint64(*f)) }

func (f *idsFlag) Set(s string) error {
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.ParseUint(strings.TrimSpace(part), 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("%q is not a dead letter id (a positive integer)", part)
		}
		*f = append(*f, n)
	}
	return nil
}

// entryJSON shows the payload as JSON when it is JSON, as a string otherwise.
type entryJSON struct {
	streams.DLQEntry
	Data any `json:"data,omitempty"`
}

func toJSON(e streams.DLQEntry) entryJSON {
	out := entryJSON{DLQEntry: e}
	if json.Valid(e.Data) {
		out.Data = json.RawMessage(e.Data)
	} else if len(e.Data) > 0 {
		out.Data = string(e.Data)
	}
	return out
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func dlqList(ctx context.Context, d *streams.DLQ, args []string, stdout, stderr io.Writer) error {
	fs := newDLQFlagSet("list", `Usage: engram dlq list [--stage S] [--since DURATION|RFC3339] [--limit N] [--json]

List dead letters, oldest first.
`, stderr)
	stage := fs.String("stage", "", "only dead letters of this `stage` (e.g. extractor, resolver)")
	since := &timeFlag{now: time.Now}
	fs.Var(since, "since", "only dead letters from this `time` on (RFC 3339) or this long ago (24h, 7d)")
	limit := fs.Int("limit", 100, "show at most `N` entries; 0 for all")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return handled("list", err)
	}
	if len(pos) > 0 {
		return usagef("dlq list: unexpected argument %q", pos[0])
	}
	if *limit < 0 {
		return usagef("dlq list: --limit: %d is negative", *limit)
	}
	if *stage != "" {
		if err := streams.ValidateID("--stage", *stage); err != nil {
			return usagef("dlq list: %v", err)
		}
	}
	if preflight(ctx) {
		return nil
	}
	entries, err := d.List(ctx, streams.DLQFilter{Stage: *stage, Since: since.t, Limit: *limit})
	if err != nil {
		return fmt.Errorf("dlq list: %w", err)
	}
	if *asJSON {
		out := make([]entryJSON, len(entries))
		for i, e := range entries {
			out[i] = toJSON(e)
		}
		return writeJSON(stdout, out)
	}
	if len(entries) == 0 {
		fmt.Fprintln(stdout, "no dead letters")
		return nil
	}
	tw := newTabWriter(stdout, false)
	fmt.Fprintln(tw, "ID\tSTAGE\tTENANT\tSUBJECT\tSEQ\tATTEMPTS\tDEAD-LETTERED\tERROR")
	for _, e := range entries {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\t%s\n", e.ID, e.Stage, e.Tenant, e.Subject, e.Seq,
			e.Attempts, fmtTime(e.DeadLetteredAt), oneLine(e.Error, 60))
	}
	return tw.Flush()
}

func dlqShow(ctx context.Context, d *streams.DLQ, args []string, stdout, stderr io.Writer) error {
	fs := newDLQFlagSet("show", `Usage: engram dlq show ID [--json]

Show one dead letter: where it came from, why it failed, its headers and payload.
`, stderr)
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return handled("show", err)
	}
	if len(pos) != 1 {
		fs.Usage()
		return usagef("dlq show: want exactly one ID")
	}
	id, err := strconv.ParseUint(pos[0], 10, 64)
	if err != nil || id == 0 {
		return usagef("dlq show: ID %q is not a positive integer", pos[0])
	}
	if preflight(ctx) {
		return nil
	}
	e, err := d.Get(ctx, id)
	if err != nil {
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return fmt.Errorf("dlq show: no dead letter with ID %d", id)
		}
		return fmt.Errorf("dlq show: %w", err)
	}
	if *asJSON {
		return writeJSON(stdout, toJSON(e))
	}
	tw := newTabWriter(stdout, false)
	for _, row := range [][2]string{
		{"ID", strconv.FormatUint(e.ID, 10)},
		{"Stage", e.Stage},
		{"Tenant", e.Tenant},
		{"Subject", e.Subject},
		{"Stream", fmt.Sprintf("%s (seq %d)", e.Stream, e.Seq)},
		{"Msg ID", e.MsgID},
		{"Attempts", strconv.Itoa(e.Attempts)},
		{"First failure", fmtTime(e.FirstFailure)},
		{"Last failure", fmtTime(e.LastFailure)},
		{"Dead-lettered", fmtTime(e.DeadLetteredAt)},
		{"Error", e.Error},
	} {
		fmt.Fprintf(tw, "%s:\t%s\n", row[0], row[1])
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "Headers:")
	for _, k := range slices.Sorted(maps.Keys(e.Headers)) {
		for _, v := range e.Headers[k] {
			fmt.Fprintf(stdout, "  %s: %s\n", k, v)
		}
	}
	fmt.Fprintln(stdout, "Payload:")
	var pretty strings.Builder
	if json.Valid(e.Data) {
		enc := json.NewEncoder(&pretty)
		enc.SetIndent("  ", "  ")
		_ = enc.Encode(json.RawMessage(e.Data))
		fmt.Fprintf(stdout, "  %s", pretty.String())
	} else {
		fmt.Fprintf(stdout, "  %q\n", e.Data)
	}
	return nil
}

func dlqReplay(ctx context.Context, d *streams.DLQ, args []string, stdout, stderr io.Writer) error {
	fs := newDLQFlagSet("replay", `Usage: engram dlq replay (--stage S | --id N... | --all) [--json]

Republish dead letters to their original subjects, with their original headers and a
fresh message id, and remove each one once JetStream has accepted its republish.
One of --stage, --id or --all is required.
`, stderr)
	stage := fs.String("stage", "", "replay the dead letters of this `stage`")
	var ids idsFlag
	fs.Var(&ids, "id", "replay the dead letter with this `ID` (repeatable, or comma-separated)")
	all := fs.Bool("all", false, "replay every dead letter (narrowed by --stage when given)")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return handled("replay", err)
	}
	switch {
	case len(pos) > 0:
		return usagef("dlq replay: unexpected argument %q (use --id)", pos[0])
	case *stage == "" && len(ids) == 0 && !*all:
		fs.Usage()
		return usagef("dlq replay: refusing to replay without --stage, --id or --all")
	case *all && len(ids) > 0:
		return usagef("dlq replay: --all cannot be combined with --id")
	}
	if *stage != "" {
		if err := streams.ValidateID("--stage", *stage); err != nil {
			return usagef("dlq replay: %v", err)
		}
	}
	if preflight(ctx) {
		return nil
	}
	res, rerr := d.Replay(ctx, streams.DLQFilter{Stage: *stage, IDs: ids})
	if *asJSON {
		if err := writeJSON(stdout, res); err != nil {
			return err
		}
	} else if len(res.Outcomes) == 0 && rerr == nil {
		fmt.Fprintln(stdout, "nothing to replay")
	} else {
		tw := newTabWriter(stdout, false)
		fmt.Fprintln(tw, "ID\tSUBJECT\tRESULT")
		for _, o := range res.Outcomes {
			result := fmt.Sprintf("replayed as %s/%d", o.Stream, o.Seq)
			if o.Duplicate {
				result += " (duplicate)"
			}
			if o.Error != "" {
				result = "FAILED: " + oneLine(o.Error, 100)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\n", o.ID, o.Subject, result)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "replayed %d, failed %d\n", res.Replayed, res.Failed)
	}
	if rerr != nil {
		return fmt.Errorf("dlq replay: %w", rerr)
	}
	return nil
}

func dlqPurge(ctx context.Context, d *streams.DLQ, args []string, stdout, stderr io.Writer) error {
	fs := newDLQFlagSet("purge", `Usage: engram dlq purge (--before RFC3339|DURATION | --stage S | --all) [--json]

Delete dead letters for good. With --before, only those dead-lettered before that time
(or that long ago); with --stage, only that stage's. --all alone purges everything.
`, stderr)
	before := &timeFlag{now: time.Now}
	fs.Var(before, "before", "purge dead letters older than this `time` (RFC 3339) or age (24h, 7d)")
	stage := fs.String("stage", "", "purge only dead letters of this `stage`")
	all := fs.Bool("all", false, "allow purging without --before or --stage")
	asJSON := fs.Bool("json", false, "print JSON")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return handled("purge", err)
	}
	switch {
	case len(pos) > 0:
		return usagef("dlq purge: unexpected argument %q", pos[0])
	case before.t.IsZero() && *stage == "" && !*all:
		fs.Usage()
		return usagef("dlq purge: refusing to purge everything without --all (or narrow with --before, --stage)")
	}
	if *stage != "" {
		if err := streams.ValidateID("--stage", *stage); err != nil {
			return usagef("dlq purge: %v", err)
		}
	}
	if preflight(ctx) {
		return nil
	}
	n, err := d.Purge(ctx, before.t, *stage)
	if err != nil {
		return fmt.Errorf("dlq purge: %w", err)
	}
	if *asJSON {
		return writeJSON(stdout, map[string]int{"purged": n})
	}
	fmt.Fprintf(stdout, "purged %d dead letters\n", n)
	return nil
}
