package runner

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cclab/orchestrator/flows"
)

func TestETAAndPlanEnd(t *testing.T) {
	if got := eta(90*time.Second, 3, 3); got != 90*time.Second {
		t.Errorf("eta after 3 of 6 in 90 s: %v, want 90s", got)
	}
	if got := eta(time.Minute, 0, 5); got != 0 {
		t.Errorf("eta with nothing done: %v, want 0", got)
	}
	specs := []flows.Spec{{Start: time.Second}, {Start: 0, Stop: 3 * time.Second}, {Start: 2500 * time.Millisecond}}
	if got := planEnd(specs); got != 3*time.Second {
		t.Errorf("planEnd %v, want the long flow's stop 3s", got)
	}
}

// The progress line says how much of the planned workload is left.
func TestProgressSaysWhatIsLeft(t *testing.T) {
	var buf syncBuffer
	var done atomic.Int64
	done.Store(7)
	stop := progress(&buf, "cubic", 10, 5*time.Second, &done)
	time.Sleep(1100 * time.Millisecond)
	stop()
	out := buf.String()
	if !strings.Contains(out, "[cubic] flows 7/10 done") || !strings.Contains(out, "the workload plans 4s more") {
		t.Errorf("progress printed:\n%s", out)
	}
}

// syncBuffer is a bytes.Buffer the progress goroutine may write while
// the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
