package extractor

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/engramhq/engram/memory"
)

func TestZZScratch(t *testing.T) {
	f := os.Getenv("SCRATCH")
	if f == "" {
		t.Skip()
	}
	fh, _ := os.Open(f)
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	o := NewOffline()
	g := NewGate()
	ref := time.Now().AddDate(0, 0, -4)
	if os.Getenv("DAYS") != "" {
		var d int
		fmt.Sscan(os.Getenv("DAYS"), &d)
		ref = time.Now().AddDate(0, 0, -d)
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		tu := memory.Turn{TurnID: "t1", UserID: "u", SessionID: "s", Role: memory.RoleUser, Content: line, OccurredAt: ref}
		gr := g.Check(tu)
		fmt.Printf("\n>> %s\n   gate=%v %v %s\n", line, gr.Pass, gr.Signals, gr.Reason)
		cs, _ := o.Extract(context.Background(), Batch{UserID: "u", SessionID: "s", New: []memory.Turn{tu}})
		for _, c := range cs {
			fmt.Printf("   [%s/%s key=%s exp=%v meta=%v] %s\n", c.Type, c.Category, c.Key, c.ExpireAt, c.Metadata, c.Content)
		}
	}
}
