package runner

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/orchestrator/cleanup"
)

// recordingExtension notes when it is started and stopped, in a log the
// extensions of one run share; fail makes its Start fail after it
// started its work, as an extension that half-loaded its programs.
type recordingExtension struct {
	name string
	fail bool
	log  *[]string
}

func (x recordingExtension) Name() string { return x.name }

func (x recordingExtension) Start(ctx context.Context, env *Env) error {
	*x.log = append(*x.log, "start "+x.name)
	if x.fail {
		return errors.New("half-loaded")
	}
	return nil
}

func (x recordingExtension) Stop(ctx context.Context) (any, error) {
	*x.log = append(*x.log, "stop "+x.name)
	return nil, nil
}

// An extension that fails to start ends the run before its workload:
// the error names it, the extensions started before it are stopped in
// reverse order, and the teardown leaves nothing of the run (no
// namespace, no run.json: the run was not interrupted, it failed).
func TestFailedAttachTearsDown(t *testing.T) {
	exp := writeExperiment(t, "star-16.yaml", `timeout: 5s
workload:
  - name: long
    long: {src: h1, dst: h0, start: 0, stop: 100ms}
`)
	p, id := prepareRun(t, exp)
	out := t.TempDir()
	var log []string
	_, err := Run(context.Background(), p, Options{Out: out, ID: id, Log: io.Discard, RTTSamples: 20,
		Extensions: func() []Extension {
			return []Extension{recordingExtension{"a", false, &log}, recordingExtension{"b", false, &log}, recordingExtension{"c", true, &log}}
		}})
	if err == nil || !strings.Contains(err.Error(), "extension c: half-loaded") {
		t.Fatalf("Run: %v, want extension c's error", err)
	}
	if got, want := strings.Join(log, ", "), "start a, start b, start c, stop b, stop a"; got != want {
		t.Errorf("extensions: %s, want %s", got, want)
	}
	ns, err := cleanup.Namespaces(id)
	if err != nil {
		t.Fatal(err)
	}
	if len(ns) > 0 {
		t.Errorf("namespaces left after the teardown: %v", ns)
	}
	if _, err := os.Stat(filepath.Join(out, string(id), "run.json")); !os.IsNotExist(err) {
		t.Errorf("a failed (not interrupted) run wrote run.json: %v", err)
	}
}
