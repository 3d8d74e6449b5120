package vm

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestVagrantfileValidates runs `vagrant validate` on vagrant/Vagrantfile
// (provider blocks ignored: validation needs no provider and no box).
func TestVagrantfileValidates(t *testing.T) {
	if _, err := exec.LookPath("vagrant"); err != nil {
		t.Skip("vagrant is not installed (scripts/bootstrap installs it)")
	}
	dir, err := filepath.Abs("../../vagrant")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("vagrant", "validate", "--ignore-provider")
	cmd.Dir = dir
	// Keep vagrant's per-project state out of the tree.
	cmd.Env = append(cmd.Environ(), "VAGRANT_DOTFILE_PATH="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("vagrant validate: %v\n%s", err, out)
	}
}
