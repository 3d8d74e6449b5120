package hostlock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Two holders never hold the lock at once: the second fails with ErrBusy
// naming the holder, or, waiting, gets it once the first releases it.
func TestOneHolderAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.lock")
	ctx := context.Background()
	a, err := Acquire(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Acquire(ctx, path, false)
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second holder: %v", err)
	}
	got := make(chan time.Time)
	go func() {
		b, err := Acquire(ctx, path, true)
		if err != nil {
			t.Error(err)
		}
		got <- time.Now()
		b.Release()
	}()
	time.Sleep(300 * time.Millisecond)
	released := time.Now()
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if at := <-got; at.Before(released) {
		t.Errorf("the waiter got the lock at %v, before its release at %v", at, released)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	c, err := Acquire(short, path, false)
	if err != nil {
		t.Fatalf("after both released: %v", err)
	}
	defer c.Release()
	if _, err := Acquire(short, path, true); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting past the context: %v", err)
	}
}

// A holder killed with SIGKILL leaves the lock free: the kernel drops a
// dead process's flock.
func TestKilledHolderFreesTheLock(t *testing.T) {
	if os.Getenv("HOSTLOCK_CHILD") != "" {
		if _, err := Acquire(context.Background(), os.Getenv("HOSTLOCK_CHILD"), false); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		return
	}
	path := filepath.Join(t.TempDir(), "host.lock")
	cmd := exec.Command(os.Args[0], "-test.run", "TestKilledHolderFreesTheLock")
	cmd.Env = append(os.Environ(), "HOSTLOCK_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil || string(buf[:4]) != "held" {
		t.Fatalf("child: %q %v", buf, err)
	}
	if _, err := Acquire(context.Background(), path, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("while the child holds it: %v", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	l, err := Acquire(context.Background(), path, false)
	if err != nil {
		t.Fatalf("after the holder was killed: %v", err)
	}
	l.Release()
}
