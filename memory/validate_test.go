package memory_test

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct {
		name, s  string
		max      int
		wantCode string
	}{
		{"plain", "hello 世界 🧠", 0, ""},
		{"empty", "", 0, ""},
		{"NUL", "a\x00b", 0, memory.CodeInvalidField},
		{"invalid UTF-8", "a\xffb", 0, memory.CodeInvalidField},
		{"encoded surrogate", "\xed\xa0\x80", 0, memory.CodeInvalidField},
		{"at limit", "abcd", 4, ""},
		{"over limit", "abcde", 4, memory.CodeTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := memory.CheckText("content", tc.s, tc.max)
			switch {
			case tc.wantCode == "" && fe != nil:
				t.Fatalf("unexpected %v", fe)
			case tc.wantCode != "" && (fe == nil || fe.Code != tc.wantCode || fe.Field != "content"):
				t.Fatalf("got %v, want %s at content", fe, tc.wantCode)
			}
		})
	}
}

func TestCheckTime(t *testing.T) {
	for _, tc := range []struct {
		name, at string
		ok       bool
	}{
		{"ordinary", "2026-01-02T03:04:05Z", true},
		{"last UTC instant", "9999-12-31T23:59:59.999999999Z", true},
		{"first UTC instant", "0000-01-01T00:00:00Z", true},
		{"year 10000 in UTC", "9999-12-31T23:59:59-23:59", false},
		{"year -1 in UTC", "0000-01-01T00:00:00+23:59", false},
		{"in range once in UTC", "9999-12-31T23:59:59+01:00", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, err := time.Parse(time.RFC3339Nano, tc.at)
			if err != nil {
				t.Fatal(err)
			}
			fe := memory.CheckTime("valid_from", at)
			if (fe == nil) != tc.ok {
				t.Fatalf("CheckTime(%s) = %v, want ok %v", tc.at, fe, tc.ok)
			}
			if fe != nil && (fe.Field != "valid_from" || fe.Code != memory.CodeInvalidField) {
				t.Fatalf("error %+v: want invalid_field on valid_from", fe)
			}
		})
	}
}

func TestCheckMetadata(t *testing.T) {
	decode := func(s string) map[string]any {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	type custom struct{ A string }
	for _, tc := range []struct {
		name      string
		md        map[string]any
		max       int
		wantField string // "" for valid
	}{
		{"nil", nil, 0, ""},
		{"scalars", decode(`{"a":1,"b":"x","c":true,"d":null,"e":[1.5,-2e10],"f":{"g":"h"}}`), 0, ""},
		{"large integer", decode(`{"id":123456789012345678901234567890}`), 0, ""},
		{"max float", decode(`{"f":1.7976931348623157e308}`), 0, ""},
		{"overflow", decode(`{"f":1e999999}`), 0, "md.f"},
		{"negative overflow nested", decode(`{"a":{"b":[0,-1e400]}}`), 0, "md.a.b[1]"},
		{"NUL in value", decode(`{"a":"x\u0000"}`), 0, "md.a"},
		{"NUL in key", decode(`{"k\u0000":1}`), 0, "md.k\x00"},
		{"float Inf", map[string]any{"x": math.Inf(1)}, 0, "md.x"},
		{"float NaN", map[string]any{"x": math.NaN()}, 0, "md.x"},
		{"invalid UTF-8 from Go", map[string]any{"x": "\xff"}, 0, "md.x"},
		{"Go struct with NUL", map[string]any{"x": custom{A: "\x00"}}, 0, "md.x.A"},
		{"Go channel", map[string]any{"x": make(chan int)}, 0, "md.x"},
		{"deep", decode(`{"a":` + strings.Repeat("[", memory.MaxMetadataDepth) + strings.Repeat("]", memory.MaxMetadataDepth) + `}`), 0, "md.a" + strings.Repeat("[0]", memory.MaxMetadataDepth-1)},
		{"at depth limit", decode(`{"a":` + strings.Repeat("[", memory.MaxMetadataDepth-1) + strings.Repeat("]", memory.MaxMetadataDepth-1) + `}`), 0, ""},
		{"too large", map[string]any{"x": strings.Repeat("y", 100)}, 50, "md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := memory.CheckMetadata("md", tc.md, tc.max)
			switch {
			case tc.wantField == "" && fe != nil:
				t.Fatalf("unexpected %v", fe)
			case tc.wantField != "" && (fe == nil || fe.Field != tc.wantField):
				t.Fatalf("got %v, want an error at %q", fe, tc.wantField)
			}
		})
	}
}

func TestCheckTurn(t *testing.T) {
	ok := memory.Turn{TurnID: "t1", UserID: "u1", SessionID: "s1", Role: memory.RoleUser, Content: "hi"}
	for _, tc := range []struct {
		name      string
		edit      func(*memory.Turn)
		wantField string
	}{
		{"valid", func(*memory.Turn) {}, ""},
		{"NUL in content", func(t *memory.Turn) { t.Content = "a\x00" }, "turns[3].content"},
		{"content too large", func(t *memory.Turn) { t.Content = strings.Repeat("x", memory.MaxTurnContentBytes+1) }, "turns[3].content"},
		{"NUL in user_id", func(t *memory.Turn) { t.UserID = "u\x00" }, "turns[3].user_id"},
		{"missing session", func(t *memory.Turn) { t.SessionID = "" }, "turns[3].session_id"},
		{"bad role", func(t *memory.Turn) { t.Role = "bot" }, "turns[3].role"},
		{"bad tool status", func(t *memory.Turn) { t.Tool = &memory.ToolCall{Name: "x", Status: "ok"} }, "turns[3].tool.status"},
		{"NUL in tool error", func(t *memory.Turn) { t.Tool = &memory.ToolCall{Name: "x", Status: "failure", Error: "\x00"} }, "turns[3].tool.error"},
		{"bad metadata", func(t *memory.Turn) { t.Metadata = map[string]any{"n": json.Number("1e999999")} }, "turns[3].metadata.n"},
		{"no times", func(t *memory.Turn) { t.OccurredAt, t.ReceivedAt = time.Time{}, time.Time{} }, ""},
		{"occurred_at in year 10000 UTC", func(t *memory.Turn) { t.OccurredAt = year10000() }, "turns[3].occurred_at"},
		{"received_at in year 10000 UTC", func(t *memory.Turn) { t.ReceivedAt = year10000() }, "turns[3].received_at"},
		{"occurred_at before year 0", func(t *memory.Turn) { t.OccurredAt = time.Date(-1, 6, 1, 0, 0, 0, 0, time.UTC) }, "turns[3].occurred_at"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			turn := ok
			tc.edit(&turn)
			fe := memory.CheckTurn("turns[3]", turn)
			switch {
			case tc.wantField == "" && fe != nil:
				t.Fatalf("unexpected %v", fe)
			case tc.wantField != "" && (fe == nil || fe.Field != tc.wantField || fe.Code == ""):
				t.Fatalf("got %v, want an error at %q", fe, tc.wantField)
			}
		})
	}
}

// year10000 is the last instant of 9999 at offset -23:59: year 10000 in UTC.
func year10000() time.Time {
	return time.Date(9999, 12, 31, 23, 59, 59, 0, time.FixedZone("", -(23*3600+59*60)))
}

func TestCheckOccurredAt(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		at      time.Time
		wantMsg string // "" for accepted
	}{
		{"now", now, ""},
		{"an hour ago", now.Add(-time.Hour), ""},
		{"the Unix epoch", time.Unix(0, 0), ""},
		{"within the skew", now.Add(4 * time.Minute), ""},
		{"past the skew", now.Add(6 * time.Minute), "in the future"},
		{"year 10000 in UTC", year10000(), "in the future"},
		{"before 1970", time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC), "before 1970"},
		{"zero", time.Time{}, "before 1970"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fe := memory.CheckOccurredAt("turn.occurred_at", tc.at, now, memory.DefaultMaxFutureSkew)
			switch {
			case tc.wantMsg == "" && fe != nil:
				t.Fatalf("unexpected %v", fe)
			case tc.wantMsg != "" && (fe == nil || fe.Field != "turn.occurred_at" || fe.Code != memory.CodeInvalidField ||
				!strings.Contains(fe.Message, tc.wantMsg)):
				t.Fatalf("got %v, want invalid_field on turn.occurred_at saying %q", fe, tc.wantMsg)
			}
		})
	}
}
