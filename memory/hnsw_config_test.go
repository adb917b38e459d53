package memory

import "testing"

func TestHNSWConfigMethod(t *testing.T) {
	t.Parallel()
	c := HNSWConfig{}.withDefaults() // IVFFlat from 500,000
	for _, tc := range []struct {
		name         string
		rows, blocks int64
		have, want   string
	}{
		{"below the threshold", 499_999, 1_000_000, "", MethodHNSW},
		{"at the threshold", 500_000, 1_000_000, "", MethodIVFFlat},
		{"HNSW owner crossing it", 600_000, 1_000_000, MethodHNSW, MethodIVFFlat},
		{"IVFFlat owner above half", 250_000, 1_000_000, MethodIVFFlat, MethodIVFFlat},
		{"IVFFlat owner below half", 249_999, 1_000_000, MethodIVFFlat, MethodHNSW},
		// 50 × 500,000 / 3,000,000 = 8 samples a list: too few for k-means.
		{"a small share of a large table", 500_000, 3_000_000, "", MethodHNSW},
		{"an IVFFlat owner keeps it as the table grows", 500_000, 3_000_000, MethodIVFFlat, MethodIVFFlat},
	} {
		if got := c.method(tc.rows, tc.have, tc.blocks); got != tc.want {
			t.Errorf("%s: method(%d, %q, %d) = %s, want %s", tc.name, tc.rows, tc.have, tc.blocks, got, tc.want)
		}
	}
}

func TestIVFListsProbesAndMemory(t *testing.T) {
	t.Parallel()
	c := HNSWConfig{}.withDefaults()
	for _, tc := range []struct {
		rows          int64
		lists, probes int
	}{
		{100, 1, 1},
		{20_000, 40, 40},
		{500_000, 1000, 40},
		{1_000_000, 2000, 40},
		{4_000_000, 2000, 40}, // lists capped: pgvector's k-means memory
	} {
		l := c.ivfLists(tc.rows)
		if p := c.ivfProbes(l); l != tc.lists || p != tc.probes {
			t.Errorf("%d vectors: %d lists, %d probes; want %d, %d", tc.rows, l, p, tc.lists, tc.probes)
		}
	}
	if p := (HNSWConfig{IVFProbes: 7}).ivfProbes(5); p != 5 {
		t.Errorf("7 probes asked of 5 lists: %d, want 5", p)
	}
	// pgvector asks for 4 bytes a sample and list beyond the samples themselves: at
	// 2,000 lists of 384 dimensions, 100,000 samples, about 0.96 GB in all.
	if mb := ivfWorkMem(2000, 384); mb < 960 || mb > 1400 {
		t.Errorf("maintenance_work_mem for 2,000 lists of 384: %d MB, want 960-1400", mb)
	}
	if small, large := ivfWorkMem(1, 16), ivfWorkMem(1000, 384); small < 64 || large <= small {
		t.Errorf("ivfWorkMem: %d MB for 1 list, %d for 1,000", small, large)
	}
}
