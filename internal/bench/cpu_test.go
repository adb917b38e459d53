package bench_test

import (
	"math"
	"testing"

	"github.com/engramhq/engram/internal/bench"
)

func TestCPUUsePerItem(t *testing.T) {
	tests := []struct {
		name                     string
		use                      bench.CPUUse
		items                    int
		machine, engram, pg, cap float64
	}{
		{"two cores, 4 ms a candidate", bench.CPUUse{Cores: 2, MachineSeconds: 20, EngramSeconds: 4, PostgresSeconds: 15}, 5000, 4, 0.8, 3, 500},
		{"one core, 1 ms an item", bench.CPUUse{Cores: 1, MachineSeconds: 1, EngramSeconds: 0.5, PostgresSeconds: 0.5}, 1000, 1, 0.5, 0.5, 1000},
		{"no items", bench.CPUUse{Cores: 2, MachineSeconds: 1}, 0, 0, 0, 0, 0},
		{"no CPU read", bench.CPUUse{Cores: 2}, 100, 0, 0, 0, 0},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, e, p := tt.use.PerItemMs(tt.items)
			if !near(m, tt.machine) || !near(e, tt.engram) || !near(p, tt.pg) {
				t.Errorf("PerItemMs(%d) = %v, %v, %v; want %v, %v, %v", tt.items, m, e, p, tt.machine, tt.engram, tt.pg)
			}
			if c := tt.use.CoreBound(tt.items); !near(c, tt.cap) {
				t.Errorf("CoreBound(%d) = %v; want %v", tt.items, c, tt.cap)
			}
		})
	}
}
