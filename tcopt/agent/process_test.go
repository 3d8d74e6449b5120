package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
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
		// iperf3 -J reports a refused connection in its JSON, exiting 0.
		if err = cli.Wait(); err == nil && !strings.Contains(string(buf.b), "Connection refused") {
			out = buf.b
			break
		}
		if err == nil {
			err = fmt.Errorf("%s", buf.b)
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
			SumReceived struct {
				Bytes float64 `json:"bytes"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out, &res); err != nil || res.End.SumSent.Bytes < 8<<20 {
		t.Fatalf("iperf3 sent %v bytes (%v): %s", res.End.SumSent.Bytes, err, out)
	}
	st, err := a.Stats()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iperf3 sent %.0f bytes, %.0f received: %+v", res.End.SumSent.Bytes, res.End.SumReceived.Bytes, st)
	// What the server received took at least one skb of at most 64 KB per
	// 64 KB, each with the option. (iperf3 may end before all it wrote is
	// sent; received segments with identical options that wait in a busy
	// socket's backlog are coalesced by the kernel and parsed once.)
	if st.OptionsWritten < uint64(res.End.SumReceived.Bytes)/65536 || res.End.SumReceived.Bytes < 1<<20 ||
		st.ForwardsParsed == 0 || st.EchoesParsed == 0 || st.Malformed != 0 {
		t.Fatalf("agent counters %+v", st)
	}
	if cg, _ := cgroupOf(os.Getpid()); cg == "/cclab-"+string(id) {
		t.Fatal("the test process itself is in the run's cgroup")
	}
}

type jsonBuffer struct{ b []byte }

func (j *jsonBuffer) Write(p []byte) (int, error) { j.b = append(j.b, p...); return len(p), nil }
