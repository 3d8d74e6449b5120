package interrupt

import (
	"os"

	"golang.org/x/sys/unix"
)

// DieWithParent asks the kernel to send this process SIGHUP when its
// parent exits (PR_SET_PDEATHSIG), so that a run whose starter was killed
// tears down (Watch turns the SIGHUP into cancellation). It returns the
// parent's pid, for Watch to tell a parent's death from a terminal's
// hangup. Under nohup (SIGHUP ignored) it sets nothing: the run is to
// outlive its parent.
//
// Caveats, from the kernel's rule: the signal comes when the *thread*
// that forked cclab exits, not its process, so a multi-threaded parent
// whose forking thread ends early (a Go program's locked thread, a
// Python thread pool) ends the run although the parent lives on. A
// parent that died before this call sends nothing. And the setting
// belongs to the calling thread: call it while Go initialises the
// program (a package variable's initialiser in main), which runs on the
// main thread, the one thread that lives as long as the process.
func DieWithParent() (parent int, err error) {
	parent = os.Getppid()
	if sigHUPIgnored() {
		return parent, nil
	}
	return parent, unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGHUP), 0, 0, 0)
}
