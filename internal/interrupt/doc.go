// Package interrupt turns the signals that end a cclab command into the
// cancellation of its context, so that every way a run can be stopped
// tears it down as Ctrl-C does: SIGINT, SIGTERM, SIGHUP (the terminal
// closed), SIGPIPE on a broken standard output or error (`cclab run 2>&1
// | head`), and the death of the parent process (PR_SET_PDEATHSIG, sent
// as SIGHUP). The context's cause is a *Signal: which signal, and when.
//
// Only SIGKILL (and a dying machine) leaves a run behind; `cclab clean
// --run ID` removes what it left.
package interrupt
