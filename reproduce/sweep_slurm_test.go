package reproduce

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cclab/internal/testtier"
)

// slurmConf is the two-node cluster on localhost of
// shared/notes/slurm-local.md: no munge, no systemd, each slurmd on its
// own port.
const slurmConf = `ClusterName=cclabtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=%[1]s/state
SlurmdSpoolDir=%[1]s/spool/%%n
SlurmctldPidFile=%[1]s/slurmctld.pid
SlurmdPidFile=%[1]s/slurmd-%%n.pid
SlurmctldLogFile=%[1]s/slurmctld.log
SlurmdLogFile=%[1]s/slurmd-%%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
NodeName=n[1-2] NodeHostname=localhost NodeAddr=127.0.0.1 Port=[17001-17002] CPUs=1 RealMemory=1000 State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE
`

// The sweep end to end on a real Slurm: the plan's own submit.sh submits
// its job array and the gather (afterany) to a controller and two slurmd
// started here; the two "nodes" share this kernel, so the host lock makes
// their real run-one tasks take turns; the gather pools them into a
// results page. Nothing of Slurm is left running after it.
func TestSlurmSweep(t *testing.T) {
	testtier.Kernel(t)
	for _, bin := range []string{"slurmctld", "slurmd", "sbatch", "sinfo", "scontrol"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s is not installed (make bootstrap installs Slurm): %v", bin, err)
		}
	}
	tmp := t.TempDir()
	cclab := filepath.Join(tmp, "cclab")
	build := exec.Command("go", "build", "-ldflags", "-X main.buildRevision=slurmtest -X main.buildModified=false", "-o", cclab, "./cmd/cclab")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build cclab: %v\n%s", err, out)
	}
	out := filepath.Join(tmp, "sweep")
	lock := filepath.Join(tmp, "host.lock")
	plan := exec.Command(cclab, "sweep", "plan", "smoke", "--out", out, "--root", root, "--parallel", "2")
	if b, err := plan.CombinedOutput(); err != nil {
		t.Fatalf("plan: %v\n%s", err, b)
	}
	// The tasks take this test's own host lock, so that they turn-take with
	// each other and not with another test of the machine.
	arr := filepath.Join(out, SlurmArrayFile)
	b, err := os.ReadFile(arr)
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Replace(string(b), "--wait\n", "--wait --lock "+lock+"\n", 1)
	if err := os.WriteFile(arr, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}

	d := filepath.Join(tmp, "slurm")
	for _, sub := range []string{"state", "spool"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	conf := filepath.Join(d, "slurm.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(slurmConf, d)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "SLURM_CONF="+conf)
	var daemons []*exec.Cmd
	start := func(args ...string) {
		c := exec.Command(args[0], args[1:]...)
		c.Env = env
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		daemons = append(daemons, c)
	}
	slurm := func(args ...string) (string, error) {
		c := exec.Command(args[0], args[1:]...)
		c.Env = env
		b, err := c.CombinedOutput()
		return string(b), err
	}
	defer func() {
		slurm("scontrol", "shutdown")
		done := make(chan struct{})
		go func() {
			for _, c := range daemons {
				c.Wait()
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			for _, c := range daemons {
				syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
			}
			<-done
			t.Error("Slurm did not shut down within 20 s: killed")
		}
		if t.Failed() {
			for _, f := range []string{"slurmctld.log", "slurmd-n1.log", "slurmd-n2.log"} {
				b, _ := os.ReadFile(filepath.Join(d, f))
				t.Logf("%s:\n%s", f, tail(string(b), 2000))
			}
		}
	}()
	start("slurmctld", "-D", "-i", "-f", conf)
	start("slurmd", "-D", "-N", "n1", "-f", conf)
	start("slurmd", "-D", "-N", "n2", "-f", conf)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	wait := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			}
			time.Sleep(500 * time.Millisecond)
		}
	}
	wait("two idle nodes", func() bool {
		s, err := slurm("sinfo", "-h", "-N", "-o", "%N %t")
		return err == nil && strings.Count(s, "idle") == 2
	})
	sub := exec.Command("bash", filepath.Join(out, SlurmSubmitFile))
	sub.Env = env
	if b, err := sub.CombinedOutput(); err != nil {
		t.Fatalf("submit.sh: %v\n%s", err, b)
	} else {
		t.Logf("submit.sh: %s", strings.TrimSpace(string(b)))
	}
	page := filepath.Join(out, "docs", ResultsPage)
	wait("the gather's page", func() bool {
		_, err := os.Stat(page)
		s, _ := slurm("squeue", "-h")
		return err == nil && strings.TrimSpace(s) == ""
	})

	p, id, err := ReadPlan(filepath.Join(out, PlanFile))
	if err != nil {
		t.Fatal(err)
	}
	var spans [][2]time.Time
	for _, task := range p.Tasks {
		m, err := readMarker(filepath.Join(p.TaskDir(task), MarkerFile))
		if err != nil {
			t.Fatalf("task %d: %v", task.Index, err)
		}
		if m.Plan != id || len(m.Run.Variants) != 1 || m.Run.Variants[0].Status != "ran" {
			t.Errorf("task %d: marker %+v", task.Index, m)
		}
		a, _ := time.Parse(time.RFC3339, m.Started)
		z, _ := time.Parse(time.RFC3339, m.Finished)
		spans = append(spans, [2]time.Time{a, z})
	}
	// The host lock: no two tasks ran at once (markers have 1 s
	// resolution, so a shared second is allowed at the edges).
	for i := range spans {
		for j := range spans {
			if i < j && spans[i][0].Before(spans[j][1].Add(-time.Second)) && spans[j][0].Before(spans[i][1].Add(-time.Second)) {
				t.Errorf("tasks %d and %d overlapped: %v and %v", i, j, spans[i], spans[j])
			}
		}
	}
	logs, _ := filepath.Glob(filepath.Join(out, "logs", "task-*.log"))
	gather, err := os.ReadFile(filepath.Join(out, "logs", "gather.log"))
	if len(logs) != 3 || err != nil || !strings.Contains(string(gather), "3 of 3 tasks done") {
		t.Errorf("logs %v; gather: %v\n%s", logs, err, gather)
	}
	b, err = os.ReadFile(page)
	if err != nil || !strings.Contains(string(b), "smoke") || !strings.Contains(string(b), "n = 3") {
		t.Errorf("results page: %v\n%s", err, tail(string(b), 1500))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
