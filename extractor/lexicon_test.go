package extractor

import (
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

// The gate and the offline extractor read one lexicon: whatever the extractor has a
// rule for must get past the gate (before, identity facts phrased with an adverb such
// as 现在 / "currently" were extractable but gated out).
func TestGateLetsThroughWhatTheExtractorKnows(t *testing.T) {
	g, o := NewGate(), NewOffline()
	// Short on purpose: long first-person statements pass the gate weakly anyway.
	for _, text := range []string{
		"我目前在银行上班",
		"我现在住在洛阳",
		"I currently live in Porto",
		"I now live in Leeds",
		"我目前就职于华为",
	} {
		turn := memory.Turn{TurnID: "t1", UserID: "u", SessionID: "s", Role: memory.RoleUser, Content: text,
			OccurredAt: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
		cands, err := o.Extract(t.Context(), Batch{Tenant: "acme", UserID: "u", SessionID: "s", New: []memory.Turn{turn}})
		if err != nil {
			t.Fatal(err)
		}
		if len(cands) == 0 {
			t.Errorf("%q: the offline extractor made nothing of it (the test expects an identity fact)", text)
			continue
		}
		if r := g.Check(turn); !r.Pass {
			t.Errorf("%q: extractable (%q) but gated out: %s", text, cands[0].Content, r.Reason)
		}
	}
}

func TestCorrectionsAndDenials(t *testing.T) {
	t.Parallel()
	// Sentences written for this test.
	for _, tc := range []struct{ in, corrected string }{
		{"The recital is on the 9th, not the 8th.", "The recital is on the 9th"},
		{"I'm not into karaoke anymore.", "I'm not into karaoke anymore."},
		{"音乐会不是周五，是周六。", "音乐会是周六。"},
	} {
		if got := dropCorrected(tc.in); got != tc.corrected {
			t.Errorf("dropCorrected(%q) = %q, want %q", tc.in, got, tc.corrected)
		}
	}
	l := newLexicon()
	for _, tc := range []struct{ in, rest string }{
		{"I'm not in Leuven anymore, I live in Namur now", "I live in Namur now"},
		{"我已经不在无锡了，现在住在常州", "现在住在常州"},
		{"I live in Namur", "I live in Namur"},
	} {
		if got := l.dropDenied(tc.in); got != tc.rest {
			t.Errorf("dropDenied(%q) = %q, want %q", tc.in, got, tc.rest)
		}
	}
}

func TestCorrectedID(t *testing.T) {
	tests := []struct{ s, want string }{
		{"Oops, the gate code is actually 8842, not what I said.", "8842"},
		{"Sorry, my desk is D-417 really.", "D-417"},
		{"The gate code is 8842.", ""},
		{"更正一下，车位号应该是 P203。", "P203"},
		{"我的车位号是 P230。", ""},
	}
	for _, tt := range tests {
		if got := correctedID(tt.s); got != tt.want {
			t.Errorf("correctedID(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestCorrectedTo(t *testing.T) {
	tests := []struct{ s, wrong, right string }{
		{"Oops, it's Marisa, not Melissa.", "Melissa", "Marisa"},
		{"The venue is not Hall B, it's Hall C.", "", "Hall C"},
		{"不是叫小芸，是叫小云。", "小芸", "小云"},
		{"I said Tuesday but meant Thursday.", "", ""},
	}
	for _, tt := range tests {
		if got := correctedTo(tt.s); got != tt.right {
			t.Errorf("correctedTo(%q) = %q, want %q", tt.s, got, tt.right)
		}
		if tt.wrong != "" {
			if got := correctedValue(tt.s); got != tt.wrong {
				t.Errorf("correctedValue(%q) = %q, want %q", tt.s, got, tt.wrong)
			}
		}
	}
}

// TestForSpanDays: a present state told with how long it lasts holds that many days; a
// span told of the past, or of a time already spent, sets none. The sentences were
// written for this test.
func TestForSpanDays(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want int
	}{
		{"my sister is staying with us for the next five days", 5},
		{"i'm wearing a brace for six weeks", 42},
		{"the office is closed for a month", 30},
		{"we're hosting an exchange student for the coming couple of weeks", 14},
		{"接下来两周我都在上海培训", 14},
		{"这一个月我都在戒糖", 30},
		{"we were in porto for two weeks in june", 0},
		{"i've been on this diet for three months", 0},
		{"i have lived here since march", 0},
		{"i go running most days", 0},
	} {
		if got := forSpanDays(tt.text); got != tt.want {
			t.Errorf("forSpanDays(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}
