package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"cclab/rundir"
)

// A binary that `make build` makes names the commit it was built from:
// `cclab version` prints it, and every run.json records it beside the
// experiment file's hash and the kernel.
func TestBuildRecordsItsCommit(t *testing.T) {
	head, err := exec.Command("git", "-C", "../..", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout, nothing to stamp: %v", err)
	}
	commit := strings.TrimSpace(string(head))
	bin := madeCclab(t)
	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.Contains(string(out), "revision "+commit) {
		t.Fatalf("cclab version: %v\n%s\nwant revision %s", err, out, commit)
	}
	uname, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	if !strings.Contains(string(out), "kernel "+strings.TrimSpace(string(uname))) {
		t.Errorf("cclab version does not name the kernel:\n%s", out)
	}

	dir := finishedRun(t)
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunJSON))
	if err != nil {
		t.Fatal(err)
	}
	var rj struct {
		Versions   map[string]string `json:"versions"`
		Kernel     rundir.Kernel     `json:"kernel"`
		Experiment struct {
			Source string `json:"source"`
			SHA256 string `json:"source_sha256"`
		} `json:"experiment"`
		Interrupted *rundir.Interrupted `json:"interrupted"`
	}
	if err := json.Unmarshal(b, &rj); err != nil {
		t.Fatal(err)
	}
	if rj.Versions["revision"] != commit || (rj.Versions["modified"] != "true" && rj.Versions["modified"] != "false") {
		t.Errorf("run.json versions %v, want revision %s and modified", rj.Versions, commit)
	}
	src, err := os.ReadFile(filepath.Join(filepath.Dir(dir), "short.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(src)
	if rj.Experiment.SHA256 != hex.EncodeToString(sum[:]) || rj.Experiment.Source != string(src) {
		t.Errorf("run.json experiment hash %q, want the file's %x", rj.Experiment.SHA256, sum)
	}
	if rj.Kernel.Release != strings.TrimSpace(string(uname)) || rj.Kernel.Version == "" {
		t.Errorf("run.json kernel %+v", rj.Kernel)
	}
	if rj.Interrupted != nil {
		t.Errorf("a finished run is marked interrupted: %+v", rj.Interrupted)
	}
}
