// Package rundir is the run directory's format, in one place: the files a
// run writes (layout.go), flows.csv (flows.go) and the part of run.json
// every reader relies on (runjson.go). The orchestrator writes run
// directories with it and analysis reads them with it; neither defines the
// format itself. docs/run-directory.md is the reference for users.
package rundir
