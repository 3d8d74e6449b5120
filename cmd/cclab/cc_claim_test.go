package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/kmod/lawload"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/runner"
)

// cliDuringRun runs cclab commands while a run's network and laws are up
// (as a run extension), keeping what each said.
type cliDuringRun struct {
	t     *testing.T
	steps [][]string
	out   []string
	errs  []error
	also  func() error // a second run's registration, meanwhile
	alsoE error
}

func (c *cliDuringRun) Name() string { return "cli" }

func (c *cliDuringRun) Start(ctx context.Context, env *runner.Env) error {
	c.alsoE = c.also()
	for _, args := range c.steps {
		out, err := runCclab(c.t, args...)
		c.out, c.errs = append(c.out, out), append(c.errs, err)
	}
	return nil
}

func (c *cliDuringRun) Stop(ctx context.Context) (any, error) { return nil, nil }

// While a real run relies on the law it registered (a variant of DCTCP
// under a test-only name: registrations are machine-wide), `cc load` with
// other parameters, another run's registration and `cc unload` of it are
// refused, naming the run; the same parameters pass; --force replaces
// them. Once the run has ended, unload works without --force; `cc unload`
// of nothing asks for --all.
func TestCCRefusesLiveRunsLaws(t *testing.T) {
	id := runid.New()
	t.Cleanup(func() { cleanup.Clean(context.Background(), id) })
	name := "t" + string(id) + "_dctcp"
	opts := lawload.Options{PinDir: runid.New().BPFDir(), ClaimDir: t.TempDir()}
	t.Cleanup(func() {
		lawload.Unload(nil, opts)
		os.Remove(opts.PinDir)
	})
	flags := []string{"--pin-dir", opts.PinDir, "--claim-dir", opts.ClaimDir, "--name", "dctcp=" + name}
	cli := func(args ...string) []string { return append(args, flags...) }

	topo, err := filepath.Abs("../../topologies/repro-star-2.yaml")
	if err != nil {
		t.Fatal(err)
	}
	exp := filepath.Join(t.TempDir(), "exp.yaml")
	body := "name: claim\ntopology: " + topo + "\nemulation: {calibrate: false}\ncapture: {enabled: false}\ncompare: [" + name + "]\n" +
		"variants:\n  " + name + ": {law: dctcp, set: {g_shift: 5}}\nworkload:\n  - name: l\n    long: {src: h1, dst: h0, stop: 100ms}\n"
	if err := os.WriteFile(exp, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := runner.Prepare(exp)
	if err != nil {
		t.Fatal(err)
	}
	during := &cliDuringRun{t: t, steps: [][]string{
		cli("cc", "load", "dctcp", "g_shift=6"),            // 0: other parameters: refused
		cli("cc", "unload", name),                          // 1: refused
		cli("cc", "load", "dctcp", "g_shift=5"),            // 2: the run's own: kept
		cli("cc", "load", "dctcp", "g_shift=6", "--force"), // 3: replaced
	}, also: func() error {
		vopt := opts
		vopt.Names = map[string]string{"dctcp": name}
		_, err := lawload.Reconcile(context.Background(), []string{"dctcp"}, []string{"g_shift=4"}, vopt)
		return err
	}}
	if _, err := runner.Run(context.Background(), p, runner.Options{Out: t.TempDir(), ID: id, RTTSamples: 5, Laws: opts,
		Extensions: func() []runner.Extension { return []runner.Extension{during} }}); err != nil {
		t.Fatal(err)
	}
	live := "for run " + string(id) + " (pid "
	if err := during.errs[0]; err == nil || !strings.Contains(err.Error(), live) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("cc load of other parameters under a live run: %v\n%s", err, during.out[0])
	}
	if !errors.Is(during.alsoE, lawload.ErrClaimed) || !strings.Contains(during.alsoE.Error(), live) {
		t.Errorf("another run's registration under a live run: %v", during.alsoE)
	}
	if err := during.errs[1]; err == nil || !strings.Contains(err.Error(), "in use by run "+string(id)) {
		t.Errorf("cc unload under a live run: %v\n%s", err, during.out[1])
	}
	if err := during.errs[2]; err != nil || !strings.Contains(during.out[2], "already registered") {
		t.Errorf("cc load of the run's own parameters: %v\n%s", err, during.out[2])
	}
	if err := during.errs[3]; err != nil || !strings.Contains(during.out[3], "registered "+name+": ") {
		t.Errorf("cc load --force: %v\n%s", err, during.out[3])
	}
	regs, err := lawload.List(opts)
	if err != nil || len(regs) != 1 || !strings.Contains(regs[0].Params.String(), "g_shift=6") {
		t.Fatalf("after --force: %+v, %v", regs, err)
	}

	if _, err := runCclab(t, cli("cc", "unload")...); err == nil || !strings.Contains(err.Error(), "--all") {
		t.Errorf("cc unload of nothing: %v", err)
	}
	if out, err := runCclab(t, cli("cc", "unload", name)...); err != nil || !strings.Contains(out, "unregistered "+name) {
		t.Errorf("cc unload after the run: %v\n%s", err, out)
	}
}
