package retriever

import (
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

	t.Run("forgotten with the entry", func(t *testing.T) {
		var c statsCache
		if _, err := c.get("owner", time.Millisecond, read(1000)); err != nil {
			t.Fatal(err)
		}
		c.learn("owner", []memory.TermDF{{Term: "user", DF: 900}})
		time.Sleep(5 * time.Millisecond)
		c.learn("owner", []memory.TermDF{{Term: "late", DF: 900}}) // the entry expired: not kept
		got, err := c.get("owner", time.Minute, read(1200))
		if err != nil {
			t.Fatal(err)
		}
		if got.N != 1200 || len(got.Frequent) != 0 {
			t.Errorf("after expiry: %+v, want N 1200 and no frequent terms", got)
		}
	})
}
