package bench

import (
	"runtime"
	"time"

	"github.com/prometheus/procfs"
)

// CPUUse is what a phase cost in CPU, so a rate can be read against what the machine
// has: whether it is bounded by the cores (Busy near 1) or by waiting (one owner's
// candidates run one after another), and how the cost splits between this process and
// PostgreSQL. From Linux's /proc; absent elsewhere.
type CPUUse struct {
	Cores int `json:"cores"`
	// MachineSeconds is the busy time of all cores (user, nice, system, interrupts).
	MachineSeconds float64 `json:"machine_cpu_seconds"`
	// EngramSeconds is this process's CPU time.
	EngramSeconds float64 `json:"engram_cpu_seconds"`
	// PostgresSeconds is that of the processes named postgres on this machine: 0 when
	// the database runs elsewhere (PostgresLocal false).
	PostgresSeconds float64 `json:"postgres_cpu_seconds"`
	PostgresLocal   bool    `json:"postgres_local"`
	// Busy is MachineSeconds over Cores × the phase's wall time.
	Busy float64 `json:"busy"`
}

// PerItemMs is the machine's CPU milliseconds per item of the phase.
func (u CPUUse) PerItemMs(items int) (machine, engram, postgres float64) {
	if items <= 0 {
		return 0, 0, 0
	}
	f := 1000 / float64(items)
	return u.MachineSeconds * f, u.EngramSeconds * f, u.PostgresSeconds * f
}

// CoreBound is the rate the machine's cores would allow at this CPU cost per item if
// every core were busy with the work: the ceiling that no change of concurrency lifts.
func (u CPUUse) CoreBound(items int) float64 {
	if u.MachineSeconds <= 0 {
		return 0
	}
	return float64(u.Cores) * float64(items) / u.MachineSeconds
}

// cpuSample is the CPU time spent so far by the machine, this process and the local
// PostgreSQL processes (by pid, so that a backend started during a phase counts from
// zero and one that ended does not count at all).
type cpuSample struct {
	at       time.Time
	cores    int // the machine's, which /proc/stat's total covers (not this process's affinity)
	machine  float64
	self     float64
	postgres map[int]float64
}

// sampleCPU reads /proc; ok is false where it cannot (not Linux, no procfs).
func sampleCPU() (cpuSample, bool) {
	s, err := readCPU()
	return s, err == nil
}

func readCPU() (cpuSample, error) {
	s := cpuSample{at: time.Now(), postgres: map[int]float64{}}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return s, err
	}
	st, err := fs.Stat()
	if err != nil {
		return s, err
	}
	t := st.CPUTotal
	s.machine = t.User + t.Nice + t.System + t.IRQ + t.SoftIRQ
	s.cores = len(st.CPU)
	if s.cores == 0 {
		s.cores = runtime.NumCPU()
	}
	self, err := fs.Self()
	if err != nil {
		return s, err
	}
	ps, err := self.Stat()
	if err != nil {
		return s, err
	}
	s.self = ps.CPUTime()
	// Without a listing the machine and this process still count (PostgresLocal false).
	procs, _ := fs.AllProcs()
	for _, p := range procs {
		// A process may end between the listing and its read: it is skipped.
		if pst, err := p.Stat(); err == nil && pst.Comm == "postgres" {
			s.postgres[p.PID] = pst.CPUTime()
		}
	}
	return s, nil
}

// cpuSince is what was spent between before and now; nil when either read failed.
func cpuSince(before cpuSample, ok bool) *CPUUse {
	if !ok {
		return nil
	}
	after, ok := sampleCPU()
	if !ok {
		return nil
	}
	u := &CPUUse{Cores: after.cores, MachineSeconds: after.machine - before.machine, EngramSeconds: after.self - before.self}
	for pid, t := range after.postgres {
		d := t - before.postgres[pid]
		if d < 0 { // the pid was reused by a new backend: all of its time is the phase's
			d = t
		}
		u.PostgresSeconds += d
		u.PostgresLocal = true
	}
	if wall := after.at.Sub(before.at).Seconds(); wall > 0 {
		u.Busy = u.MachineSeconds / (float64(u.Cores) * wall)
	}
	return u
}
