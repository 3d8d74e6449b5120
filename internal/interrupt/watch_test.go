package interrupt

import (
	"os"
	"testing"
)

// A pipe is broken for its writer once its reader is gone, and only then:
// what tells a closed stdout's SIGPIPE from a workload socket's.
func TestBrokenPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if broken(int(w.Fd())) {
		t.Fatal("a pipe with its reader reads as broken")
	}
	r.Close()
	if !broken(int(w.Fd())) {
		t.Fatal("a pipe without its reader reads as whole")
	}
}
