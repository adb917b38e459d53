package rebuild

import (
	"strings"

	"github.com/engramhq/engram/memory"
)

// signature is what makes two memories the same for a rebuild: what they say and how
// they are filed. Importance, confidence and counters are left out (a restatement
// moves them); archived and expired count as held, since forgetting is the nightly
// job's and it decides again.
func signature(m memory.Memory) string {
	status := "held"
	if m.Status == memory.StatusPending {
		status = "pending"
	}
	return strings.Join([]string{string(m.Scope), m.SessionID, string(m.Type), string(m.Category), m.Key,
		strings.TrimSpace(m.Content), status}, "\x00")
}

func line(m memory.Memory) MemoryLine {
	return MemoryLine{ID: m.ID, Type: m.Type, Category: m.Category, Key: m.Key, Status: m.Status, Content: m.Content}
}

// diff fills or's added, removed and changed from the memories before and after:
// equal signatures cancel out; what is left pairs up as a change when both sides have
// the same key.
func diff(or *OwnerReport, before, after []memory.Memory) {
	left := map[string]int{}
	for _, m := range after {
		left[signature(m)]++
	}
	var removed []memory.Memory
	for _, m := range before {
		if s := signature(m); left[s] > 0 {
			left[s]--
			continue
		}
		removed = append(removed, m)
	}
	var added []memory.Memory
	for _, m := range after {
		if s := signature(m); left[s] > 0 {
			left[s]--
			added = append(added, m)
		}
	}
	or.Added, or.Removed, or.Changed = nil, nil, nil
	used := make([]bool, len(added))
	for _, old := range removed {
		paired := false
		if old.Key != "" {
			for i, m := range added {
				if !used[i] && m.Key == old.Key {
					used[i], paired = true, true
					or.Changed = append(or.Changed, Change{From: line(old), To: line(m)})
					break
				}
			}
		}
		if !paired {
			or.Removed = append(or.Removed, line(old))
		}
	}
	for i, m := range added {
		if !used[i] {
			or.Added = append(or.Added, line(m))
		}
	}
}
