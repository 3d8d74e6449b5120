package agent

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestChildProcesses: iperf3 server and client started in the run's cgroup
// with Agent.Start (each in its namespace through `ip netns exec`) carry
// the option and echo it, with the test process itself left outside.
func TestChildProcesses(t *testing.T) {
	a, id := attach(t)
	p := newPath(t, id, pathConfig{gso: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	srv := exec.CommandContext(ctx, "ip", "netns", "exec", p.rcv, "iperf3", "-s", "-1", "-B", p.rcvIP.String(), "-p", "5060")
	if err := a.Start(srv); err != nil {
		t.Fatal(err)
	}
	defer srv.Wait()
	defer srv.Process.Kill()
	if cg, err := cgroupOf(srv.Process.Pid); err != nil || cg != "/"+"cclab-"+string(id) {
		t.Fatalf("iperf3 server in cgroup %q (%v)", cg, err)
	}
	var out []byte
	var err error
	for i := 0; i < 50; i++ { // until the server listens
		cli := exec.CommandContext(ctx, "ip", "netns", "exec", p.snd, "iperf3", "-c", p.rcvIP.String(), "-p", "5060", "-n", "8M", "-J")
		var buf jsonBuffer
		cli.Stdout = &buf
		if err = a.Start(cli); err != nil {
			t.Fatal(err)
		}
		if err = cli.Wait(); err == nil {
			out = buf.b
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("iperf3 client: %v", err)
	}
	var res struct {
		End struct {
			SumSent struct {
				Bytes float64 `json:"bytes"`
			} `json:"sum_sent"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.End.SumSent.Bytes < 8<<20 {
		t.Fatalf("iperf3 sent %v bytes (%v)", res.End.SumSent.Bytes, err)
	}
	st, err := a.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iperf3 8 MB: %+v", st)
	// 8 MB needs at least 128 skbs of at most 64 KB, each with the option.
	// (Received segments with identical options that wait in a busy
	// socket's backlog are coalesced by the kernel and parsed once.)
	if st.OptionsWritten < 128 || st.ForwardsParsed == 0 || st.EchoesParsed == 0 || st.Malformed != 0 {
		t.Fatalf("agent counters %+v", st)
	}
	if cg, _ := cgroupOf(os.Getpid()); cg == "/cclab-"+string(id) {
		t.Fatal("the test process itself is in the run's cgroup")
	}
}

type jsonBuffer struct{ b []byte }

func (j *jsonBuffer) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }
