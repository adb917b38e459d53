package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestVectorCoverageGauge(t *testing.T) {
	t.Parallel()
	m := New(nil)
	ratio, ok := 0.0, false
	m.WatchVectorCoverage("model-b", func() (float64, bool) { return ratio, ok })
	if n := testutil.CollectAndCount(m.Registry(), "engram_vector_coverage"); n != 0 {
		t.Fatalf("%d series before the first count, want 0", n)
	}
	ratio, ok = 0.25, true
	want := `
# HELP engram_vector_coverage Share of memories (active, pending, archived) with a vector in the configured embedding model; below 1 while a new model is re-embedded.
# TYPE engram_vector_coverage gauge
engram_vector_coverage{model="model-b"} 0.25
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "engram_vector_coverage"); err != nil {
		t.Error(err)
	}
	if lint, err := testutil.GatherAndLint(m.Registry(), "engram_vector_coverage"); err != nil || len(lint) > 0 {
		t.Errorf("lint: %v %v", lint, err)
	}
}
