package flows

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cclab/internal/nsexec"
)

// Iperf3 is the Spec.Tool that runs a flow with real iperf3 processes
// (server and client started inside the hosts' namespaces) instead of
// in-process sockets, for users who want iperf3's own numbers: its JSON
// report is kept as iperf3/flow-<id>.json. StartNs/EndNs then bracket the
// client process (its control connection and results exchange included),
// and Bytes is what the iperf3 client sent (iperf3 -n counts bytes
// written, and its server stops counting at the test's end, so the
// received count can fall short): sizes above 128 KB are rounded up to
// whole 128 KB blocks (now and then one block more). Use iperf3 for its own numbers, the in-process
// runner for FCTs.
const Iperf3 = "iperf3"

// iperf3Report is the part of `iperf3 -J` that flows.csv needs.
type iperf3Report struct {
	Start struct {
		Connected []struct {
			LocalPort  int `json:"local_port"`
			RemotePort int `json:"remote_port"`
		} `json:"connected"`
	} `json:"start"`
	End struct {
		SumSent struct {
			Bytes float64 `json:"bytes"`
		} `json:"sum_sent"`
	} `json:"end"`
	Error string `json:"error"`
}

// startIn starts cmd with the calling thread in namespace ns: a forked
// child inherits the namespaces of the thread that forks it.
func startIn(ns string, cmd *exec.Cmd) error {
	return nsexec.Do(ns, cmd.Start)
}

func (r *run) iperf3Flow(s Spec, zero int64) Result {
	src, dst := r.opt.Hosts[s.Src], r.opt.Hosts[s.Dst]
	res := r.failed(s, "")
	// Below the ephemeral range, so no client socket of the host holds it.
	port := uint16(10000 + r.iperfPort.Add(1)%22000)
	res.DstPort = port
	end := s.Start
	if s.Size == 0 {
		end = s.Stop
	}
	deadline := time.Duration(zero + int64(end) + int64(r.opt.Timeout) - Monotonic())
	ctx, cancel := context.WithTimeout(r.ctx, deadline)
	defer cancel()

	srv := exec.CommandContext(ctx, "iperf3", "-s", "-1", "--forceflush", "-B", dst.Addr.String(), "-p", strconv.Itoa(int(port)))
	out, err := srv.StdoutPipe()
	if err != nil {
		res.Status += "iperf3 server: " + err.Error()
		return res
	}
	if err := startIn(dst.Netns, srv); err != nil {
		res.Status += "iperf3 server: " + err.Error()
		return res
	}
	defer srv.Wait()
	defer srv.Process.Kill() // -1 makes it exit after the client; this is for failures
	r.recordPID(srv.Process.Pid)
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		ok := false
		for sc.Scan() {
			if !ok && strings.Contains(sc.Text(), "Server listening") {
				ok = true
				ready <- true
			}
		}
		if !ok {
			ready <- false
		}
	}()
	select {
	case ok := <-ready:
		if !ok {
			res.Status += "iperf3 server exited before listening"
			return res
		}
	case <-ctx.Done():
		res.Status += "iperf3 server did not start"
		return res
	}

	args := []string{"-c", dst.Addr.String(), "-B", src.Addr.String(), "-p", strconv.Itoa(int(port)), "-J"}
	if s.CC != "" {
		args = append(args, "-C", s.CC)
	}
	if s.Size > 0 {
		// iperf3 sends whole blocks: a flow is rounded up to the block
		// length (128 KB unless the flow is smaller).
		args = append(args, "-n", strconv.FormatUint(s.Size, 10), "-l", strconv.FormatUint(min(s.Size, 128<<10), 10))
	} else {
		secs := max(1, int(math.Round((s.Stop - s.Start).Seconds())))
		args = append(args, "-t", strconv.Itoa(secs))
	}
	cli := exec.CommandContext(ctx, "iperf3", args...)
	var stdout strings.Builder
	cli.Stdout = &stdout
	if wait := time.Duration(zero + int64(s.Start) - Monotonic()); wait > 0 {
		time.Sleep(wait)
	}
	res.StartNs = Monotonic()
	if err := startIn(src.Netns, cli); err != nil {
		res.Status += "iperf3 client: " + err.Error()
		return res
	}
	r.recordPID(cli.Process.Pid)
	werr := cli.Wait()
	endNs := Monotonic()
	if r.opt.Iperf3Dir != "" {
		os.MkdirAll(r.opt.Iperf3Dir, 0o755)
		os.WriteFile(filepath.Join(r.opt.Iperf3Dir, fmt.Sprintf("flow-%d.json", s.ID)), []byte(stdout.String()), 0o644)
	}
	var rep iperf3Report
	jerr := json.Unmarshal([]byte(stdout.String()), &rep)
	if len(rep.Start.Connected) > 0 {
		res.SrcPort = uint16(rep.Start.Connected[0].LocalPort)
	}
	res.Bytes = uint64(rep.End.SumSent.Bytes)
	switch {
	case ctx.Err() != nil:
		res.Status += "timed out"
	case rep.Error != "":
		res.Status += "iperf3: " + rep.Error
	case werr != nil:
		res.Status += "iperf3 client: " + werr.Error()
	case jerr != nil:
		res.Status += "iperf3 client: unreadable report: " + jerr.Error()
	case s.Size > 0 && res.Bytes < s.Size:
		res.Status += fmt.Sprintf("short write: %d of %d bytes", res.Bytes, s.Size)
	default:
		res.EndNs, res.Status = endNs, "ok"
	}
	return res
}

func (r *run) recordPID(pid int) {
	if r.opt.RecordPID != nil {
		r.opt.RecordPID(pid)
	}
}
