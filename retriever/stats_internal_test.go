package retriever

import (
	"slices"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

// TestStatsCacheLearnsFrequentTerms checks what a search teaches the statistics
// cache: frequent terms join the owner's entry (a newer count replaces an older one),
// readers holding an earlier copy are not changed under them, nothing is learnt for an
// owner without an entry or with an expired one, and what was learnt goes with the
// entry.
func TestStatsCacheLearnsFrequentTerms(t *testing.T) {
	read := func(n float64) func() (memory.TextStats, error) {
		return func() (memory.TextStats, error) { return memory.TextStats{N: n, AvgLen: 5}, nil }
	}
	tests := []struct {
		name  string
		ttl   time.Duration
		learn [][]memory.TermDF
		key   string // where the terms are learnt; "" the read key
		want  []memory.TermDF
	}{
		{"first terms", time.Minute, [][]memory.TermDF{{{Term: "user", DF: 900}}}, "", []memory.TermDF{{Term: "user", DF: 900}}},
		{"newer count replaces", time.Minute, [][]memory.TermDF{
			{{Term: "user", DF: 900}, {Term: "note", DF: 500}}, {{Term: "user", DF: 950}}}, "",
			[]memory.TermDF{{Term: "note", DF: 500}, {Term: "user", DF: 950}}},
		{"nothing learnt", time.Minute, nil, "", nil},
		{"another owner's entry is not touched", time.Minute, [][]memory.TermDF{{{Term: "user", DF: 900}}}, "other", nil},
		{"caching off", -1, [][]memory.TermDF{{{Term: "user", DF: 900}}}, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c statsCache
			first, err := c.get("owner", tc.ttl, read(1000))
			if err != nil {
				t.Fatal(err)
			}
			key := tc.key
			if key == "" {
				key = "owner"
			}
			for _, terms := range tc.learn {
				c.learn(key, terms)
			}
			got, err := c.get("owner", tc.ttl, read(1000))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Frequent) != len(tc.want) {
				t.Fatalf("frequent %v, want %v", got.Frequent, tc.want)
			}
			for i := range tc.want {
				if got.Frequent[i] != tc.want[i] {
					t.Fatalf("frequent %v, want %v", got.Frequent, tc.want)
				}
			}
			if len(first.Frequent) != 0 {
				t.Errorf("a reader's earlier copy changed: %v", first.Frequent)
			}
		})
	}

	t.Run("kept through refreshes, then counted afresh", func(t *testing.T) {
		now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
		c := statsCache{now: func() time.Time { return now }}
		ttl := time.Minute
		if _, err := c.get("owner", ttl, read(1000)); err != nil {
			t.Fatal(err)
		}
		c.learn("owner", []memory.TermDF{{Term: "user", DF: 900}})
		now = now.Add(2 * ttl) // the entry expired: N is read again, the term is kept
		got, err := c.get("owner", ttl, read(1200))
		if err != nil {
			t.Fatal(err)
		}
		if got.N != 1200 || len(got.Frequent) != 1 || got.Frequent[0] != (memory.TermDF{Term: "user", DF: 900}) {
			t.Fatalf("after a refresh: %+v, want N 1200 and user kept", got)
		}
		c.learn("owner", []memory.TermDF{{Term: "note", DF: 700}})
		now = now.Add((frequentTermLives - 1) * ttl) // user's count is too old now; note's is not
		got, err = c.get("owner", ttl, read(1300))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Frequent) != 1 || got.Frequent[0].Term != "note" {
			t.Errorf("%d lives after user's count: %+v, want only note", frequentTermLives+1, got.Frequent)
		}
		now = now.Add(time.Minute) // expired, but learning into an expired entry keeps nothing
		c.learn("owner", []memory.TermDF{{Term: "late", DF: 900}})
		if got, _ := c.get("owner", ttl, read(1300)); slices.ContainsFunc(got.Frequent, func(f memory.TermDF) bool { return f.Term == "late" }) {
			t.Errorf("a term learnt into an expired entry was kept: %+v", got.Frequent)
		}
	})
}
