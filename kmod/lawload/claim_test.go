package lawload

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cclab/internal/runid"
)

// claimHelperEnv makes the test binary a run holding a claim (see
// TestClaimHelperProcess): "claim dir,run id,registered name".
const claimHelperEnv = "CCLAB_TEST_CLAIM_HELPER"

// TestClaimHelperProcess is not a test: run with claimHelperEnv, it holds
// a claim on the name's DCTCP defaults, says "held" and waits to be killed.
func TestClaimHelperProcess(t *testing.T) {
	spec := os.Getenv(claimHelperEnv)
	if spec == "" {
		return
	}
	f := strings.Split(spec, ",")
	ps, err := Resolve([]string{"dctcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := HoldClaim(runid.ID(f[1]), []Registration{{Law: "dctcp", Name: f[2], Params: ps[0]}}, Options{ClaimDir: f[0]}); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("held\n")
	select {}
}

// A live run's claim refuses other parameters and an unregistration of its
// names, naming the run; the same parameters pass. When the run dies
// (kill -9) its claim goes, and its marker with the next reader.
func TestClaimLifetime(t *testing.T) {
	dir := t.TempDir()
	id := runid.New()
	name := shortName("dctcp")
	opts := Options{ClaimDir: dir, Names: map[string]string{"dctcp": name}}
	child := exec.Command(os.Args[0], "-test.run=^TestClaimHelperProcess$")
	child.Env = append(os.Environ(), claimHelperEnv+"="+dir+","+string(id)+","+name)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { child.Process.Kill(); child.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "held\n" {
		t.Fatalf("helper: %q, %v", line, err)
	}

	claims, err := LiveClaims(opts)
	if err != nil || len(claims) != 1 || claims[0].Run != string(id) || claims[0].PID != child.Process.Pid {
		t.Fatalf("live claims %+v, %v; want run %s pid %d", claims, err, id, child.Process.Pid)
	}
	if err := CheckClaims([]string{"dctcp"}, nil, opts); err != nil {
		t.Errorf("the run's own parameters refused: %v", err)
	}
	err = CheckClaims([]string{"dctcp"}, []string{"g_shift=6"}, opts)
	if !errors.Is(err, ErrClaimed) || !strings.Contains(err.Error(), "for run "+string(id)+" (pid "+strconv.Itoa(child.Process.Pid)+"), which is up") {
		t.Errorf("other parameters under a live run: %v", err)
	}
	if err := CheckUnclaimed([]string{name}, opts); !errors.Is(err, ErrClaimed) || !strings.Contains(err.Error(), string(id)) {
		t.Errorf("unregistering a live run's name: %v", err)
	}
	if err := CheckUnclaimed([]string{"t" + string(runid.New())}, opts); err != nil {
		t.Errorf("a name no run relies on: %v", err)
	}

	child.Process.Kill()
	child.Wait()
	if claims, err := LiveClaims(opts); err != nil || len(claims) != 0 {
		t.Fatalf("claims of a killed run: %+v, %v", claims, err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("markers left after the run died: %v", left)
	}
	if err := CheckClaims([]string{"dctcp"}, []string{"g_shift=6"}, opts); err != nil {
		t.Errorf("a dead run's claim still refuses: %v", err)
	}

	// In one process: Release removes the claim at once.
	h, err := HoldClaim(id, []Registration{{Law: "dctcp", Name: name}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if claims, _ := LiveClaims(opts); len(claims) != 1 {
		t.Fatalf("claims while held: %+v", claims)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Errorf("markers left after Release: %v", left)
	}
}
