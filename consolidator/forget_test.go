package consolidator

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/engramhq/engram/internal/lifecycle"

	"github.com/google/uuid"

	"github.com/engramhq/engram/memory"
)

func (e *nightlyEnv) detail(tenant string, id uuid.UUID) memory.Detail {
	e.t.Helper()
	d, err := e.store.Detail(e.ctx, tenant, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return d
}

func TestForgetting(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	now := time.Now().UTC()
	type mem struct {
		name       string
		importance float64
		unused     string // interval since last use
		expireIn   string // interval from now; "" none
		accessed   bool   // last_access_at recent (overrides an old updated_at)
		confirmed  bool   // last_confirmed_at recent (likewise)
	}
	seeds := []mem{
		{name: "ttl", importance: 0.5, unused: "1 day", expireIn: "-1 hour"},
		{name: "ttl-future", importance: 0.5, unused: "1 day", expireIn: "1 day"},
		{name: "decay", importance: 0.5, unused: "40 days"},
		{name: "floor", importance: 0.105, unused: "40 days"},
		{name: "at-floor", importance: 0.1, unused: "40 days"},
		{name: "fresh", importance: 0.5, unused: "2 days"},
		{name: "used", importance: 0.5, unused: "200 days", accessed: true},
		{name: "confirmed", importance: 0.5, unused: "200 days", confirmed: true},
		{name: "cold", importance: 0.9, unused: "100 days"},
	}
	ids := map[string]uuid.UUID{}
	for _, s := range seeds {
		id := e.seed("acme", "u1", "用户的备忘 "+s.name, now.AddDate(0, -1, 0))
		ids[s.name] = id
		e.exec("acme", `UPDATE memories SET type = 'semantic', importance = $2, updated_at = now() - $3::interval,
			last_confirmed_at = CASE WHEN $6 THEN now() - interval '1 hour' ELSE now() - $3::interval END,
			expire_at = CASE WHEN $4 = '' THEN NULL ELSE now() + $4::interval END,
			last_access_at = CASE WHEN $5 THEN now() - interval '1 hour' END WHERE id = $1`,
			id, s.importance, s.unused, s.expireIn, s.accessed, s.confirmed)
	}
	oldTurn := "turn-old-" + uuid.NewString()
	err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
		_, err := tx.InsertTurn(e.ctx, memory.Turn{TurnID: oldTurn, UserID: "u1", SessionID: "s0", Role: memory.RoleTool,
			Content: "card 4111 declined", Tool: &memory.ToolCall{Name: "pay", Status: "failure", Error: "card 4111 declined"},
			OccurredAt: now.AddDate(-2, 0, 0)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}

	rep := e.run(RunOptions{})
	want := Counts{Expired: 1, Decayed: 2, Archived: 1, TurnsPurged: 1}
	got := rep.Counts
	got.Episodes, got.Clusters = 0, 0
	if got != want {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
	cases := []struct {
		name       string
		status     memory.Status
		importance float64
		change     memory.Change // last version's change
	}{
		{"ttl", memory.StatusExpired, 0.5, memory.ChangeExpire},
		{"ttl-future", memory.StatusActive, 0.5, memory.ChangeAdd},
		{"decay", memory.StatusActive, 0.45, memory.ChangeDecay},
		{"floor", memory.StatusActive, 0.1, memory.ChangeDecay},
		{"at-floor", memory.StatusActive, 0.1, memory.ChangeAdd},
		{"fresh", memory.StatusActive, 0.5, memory.ChangeAdd},
		{"used", memory.StatusActive, 0.5, memory.ChangeAdd},
		{"confirmed", memory.StatusActive, 0.5, memory.ChangeAdd},
		{"cold", memory.StatusArchived, 0.9, memory.ChangeArchive},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := e.detail("acme", ids[tc.name])
			last := d.Versions[len(d.Versions)-1]
			if d.Memory.Status != tc.status || math.Abs(d.Memory.Importance-tc.importance) > 1e-4 || last.Change != tc.change {
				t.Fatalf("status %s importance %.4f last change %s; want %s %.4f %s",
					d.Memory.Status, d.Memory.Importance, last.Change, tc.status, tc.importance, tc.change)
			}
		})
	}
	if d := e.detail("acme", ids["ttl"]); d.Memory.ValidTo == nil || d.Memory.ValidTo.After(time.Now()) {
		t.Errorf("expired memory valid_to %v", d.Memory.ValidTo)
	}
	if n := e.count("acme", `SELECT count(*) FROM audit_log WHERE action = 'decay'`); n != 2 {
		t.Errorf("%d decay audit rows, want 2", n)
	}
	if n := e.count("acme", `SELECT count(*) FROM audit_log WHERE action IN ('expire', 'archive', 'turn_purge')`); n != 3 {
		t.Errorf("%d expire/archive/turn_purge audit rows, want 3", n)
	}
	// The purged turn keeps its id and hash; its lineage still resolves.
	tr, err := func() (memory.Turn, error) {
		var tr memory.Turn
		err := e.store.InTx(e.ctx, "acme", func(tx *memory.Tx) error {
			var err error
			tr, err = tx.GetTurn(e.ctx, oldTurn)
			return err
		})
		return tr, err
	}()
	if err != nil || !tr.Deleted || tr.Content != "" || tr.Tool == nil || tr.Tool.Error != "" || tr.Tool.Name != "pay" {
		t.Fatalf("purged turn %+v, %v", tr, err)
	}
	if n := e.count("acme", `SELECT count(*) FROM turns WHERE turn_id = $1 AND content_hash IS NOT NULL AND search_text = ''`, oldTurn); n != 1 {
		t.Fatal("purged turn lost its hash or kept its search text")
	}

	// A second run the same night decays nothing more: the floor holds and the
	// interval guard stops a double decay.
	rep = e.run(RunOptions{})
	if rep.Counts.Decayed != 0 || rep.Counts.Expired != 0 || rep.Counts.Archived != 0 || rep.Counts.TurnsPurged != 0 {
		t.Fatalf("second run %+v", rep.Counts)
	}
	e.exec("acme", `UPDATE owners SET last_decay_at = now() - interval '1 day'`)
	rep = e.run(RunOptions{})
	if rep.Counts.Decayed != 1 {
		t.Fatalf("next night decayed %d, want 1 (the floor holds for the others)", rep.Counts.Decayed)
	}
	if d := e.detail("acme", ids["decay"]); math.Abs(d.Memory.Importance-0.405) > 1e-4 {
		t.Fatalf("importance after two decays %.4f", d.Memory.Importance)
	}
	if d := e.detail("acme", ids["floor"]); math.Abs(d.Memory.Importance-0.1) > 1e-6 {
		t.Fatalf("floor memory importance %.4f", d.Memory.Importance)
	}

	// Restore brings the archived memory back, and the next run leaves it.
	lc := lifecycle.NewLifecycle(e.store, nil, nil, nil)
	if _, err := lc.Restore(e.ctx, "acme", ids["fresh"], "test"); !errors.Is(err, lifecycle.ErrNotArchived) {
		t.Fatalf("restoring an active memory: %v", err)
	}
	m, err := lc.Restore(e.ctx, "acme", ids["cold"], "test")
	if err != nil || m.Status != memory.StatusActive {
		t.Fatalf("restore: %+v %v", m, err)
	}
	d := e.detail("acme", ids["cold"])
	if last := d.Versions[len(d.Versions)-1]; last.Change != memory.ChangeRestore || last.Actor != "test" {
		t.Fatalf("restore version %+v", last)
	}
	if rep := e.run(RunOptions{}); rep.Counts.Archived != 0 {
		t.Fatalf("restored memory archived again: %+v", rep.Counts)
	}
}

// TestDecayWritesAVersion: decay is a change like any other, so the memory's history
// shows it (a version row with the new importance) and its audit row names that
// version; what the memory says, when it held, and when it was last used stay.
func TestDecayWritesAVersion(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{})
	id := e.seed("acme", "u1", "用户喜欢爬山", time.Now().UTC().AddDate(0, -2, 0))
	e.exec("acme", `UPDATE memories SET type = 'semantic', importance = 0.5, updated_at = now() - interval '40 days',
		last_confirmed_at = now() - interval '40 days' WHERE id = $1`, id)
	before := e.detail("acme", id)
	if rep := e.run(RunOptions{}); rep.Counts.Decayed != 1 {
		t.Fatalf("decayed %d, want 1 (%+v)", rep.Counts.Decayed, rep.Counts)
	}
	d := e.detail("acme", id)
	if len(d.Versions) != 2 || d.Memory.Version != 2 {
		t.Fatalf("memory at version %d with %d versions, want 2 and 2: %+v", d.Memory.Version, len(d.Versions), d.Versions)
	}
	v := d.Versions[1]
	if v.Change != memory.ChangeDecay || v.Version != 2 || math.Abs(v.Importance-0.45) > 1e-4 ||
		v.Actor != "consolidator" || v.Reason == "" || v.Content != before.Memory.Content ||
		v.Status != memory.StatusActive || !v.ValidFrom.Equal(before.Memory.ValidFrom) || v.ValidTo != nil {
		t.Fatalf("decay version %+v", v)
	}
	if first := d.Versions[0]; first.ValidTo != nil || first.Change != memory.ChangeAdd {
		t.Fatalf("first version changed by decay: %+v", first)
	}
	if !d.Memory.UpdatedAt.Equal(before.Memory.UpdatedAt) {
		t.Fatalf("decay moved updated_at from %v to %v", before.Memory.UpdatedAt, d.Memory.UpdatedAt)
	}
	if n := e.count("acme", `SELECT count(*) FROM audit_log WHERE action = 'decay' AND memory_id = $1 AND version = 2
		AND module = 'consolidator' AND content_hash = $2`, id, memory.ContentHash(before.Memory.Content)); n != 1 {
		t.Fatalf("%d decay audit rows for version 2, want 1", n)
	}
}

func TestCaps(t *testing.T) {
	t.Parallel()
	e := newNightlyEnv(t, nil, NightlyConfig{MaxPerOwner: 3})
	now := time.Now().UTC()
	// value = importance × confidence × 1/(1 + days unused/30)
	seeds := []struct {
		name       string
		importance float64
		unused     string
		archived   bool
	}{
		{"high", 0.9, "1 day", false},
		{"high-old", 0.9, "20 days", false},
		{"mid", 0.5, "1 day", false},
		{"low", 0.2, "1 day", true},
		{"mid-old", 0.5, "29 days", true}, // 0.5 × 0.8 / 1.97 ≈ 0.20, below mid's 0.39
	}
	ids := map[string]uuid.UUID{}
	for _, s := range seeds {
		id := e.seed("acme", "u1", "用户的记录 "+s.name, now)
		ids[s.name] = id
		e.exec("acme", `UPDATE memories SET type = 'semantic', importance = $2, updated_at = now() - $3::interval,
			last_confirmed_at = now() - $3::interval WHERE id = $1`,
			id, s.importance, s.unused)
	}
	rep := e.run(RunOptions{})
	if rep.Counts.Capped != 2 {
		t.Fatalf("capped %d, want 2 (%+v)", rep.Counts.Capped, rep.Counts)
	}
	for _, s := range seeds {
		d := e.detail("acme", ids[s.name])
		if (d.Memory.Status == memory.StatusArchived) != s.archived {
			t.Errorf("%s: status %s, archived want %v", s.name, d.Memory.Status, s.archived)
		}
	}
}
