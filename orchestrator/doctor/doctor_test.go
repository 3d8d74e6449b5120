package doctor

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"cclab/internal/hostlock"
)

func find(cs []Check, name string) Check {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return Check{}
}

// This machine runs cclab: every check a run needs passes here (steal
// aside, which the hypervisor decides); a held host lock makes the node
// "try again" (75), not "never" (69).
func TestThisMachine(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	lock := filepath.Join(t.TempDir(), "host.lock")
	cs := Run(context.Background(), Options{LockPath: lock, Sample: 200 * time.Millisecond})
	for _, name := range []string{"root", "btf", "struct_ops", "tc", "delay line", "cpus", "host lock"} {
		if c := find(cs, name); c.Severity != OK {
			t.Errorf("%s: %s (%s)", name, c.Severity, c.Detail)
		}
	}
	if code := Exit(cs); code != 0 && !(code == ExitRetry && find(cs, "steal").Severity == Retry) {
		t.Errorf("exit %d: %+v", code, cs)
	}
	l, err := hostlock.Acquire(context.Background(), lock, false)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	cs = Run(context.Background(), Options{LockPath: lock, Sample: 10 * time.Millisecond})
	if c := find(cs, "host lock"); c.Severity != Retry || Exit(cs) != ExitRetry {
		t.Errorf("lock held: %+v, exit %d", c, Exit(cs))
	}
}

// The worst failure decides: never over retry over ok and info.
func TestExit(t *testing.T) {
	for _, tc := range []struct {
		sev  []Severity
		want int
	}{
		{[]Severity{OK, Info}, 0}, {[]Severity{OK, Retry, Info}, ExitRetry},
		{[]Severity{Retry, Never, OK}, ExitNever}, {[]Severity{Never}, ExitNever},
	} {
		var cs []Check
		for _, s := range tc.sev {
			cs = append(cs, Check{Severity: s})
		}
		if got := Exit(cs); got != tc.want {
			t.Errorf("%v: %d, want %d", tc.sev, got, tc.want)
		}
	}
}
