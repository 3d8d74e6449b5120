// Command guestint runs inside the VM test's guest: it builds a topology
// with cclab's own builder (orchestrator/netbuild: namespaces, HTB rate,
// netem delay), attaches the INT switch (tcopt/intswitch) to every switch port
// and the INT host agent (tcopt/agent) to the run's cgroup, prints what the
// guest script needs as shell assignments, and keeps it all up until its
// standard input closes or it is signalled; then it tears everything down.
//
//	guestint TOPOLOGY.yaml SRC DST
//
// Output: RUN=, NS_SRC=, NS_DST=, DST_ADDR=, CGROUP=, SWITCH_ATTACH= (tcx
// or classic, as the kernel allows) and then READY; or UNAVAILABLE
// <reason> and exit status 3.
//
//	guestint -rtt TOPOLOGY.yaml SRC DST
//
// measures what the kernel's delay engine (netem) adds to the SRC-DST
// round trip (orchestrator/vm/delaycheck) and prints ENGINE=,
// CONFIGURED_NS=, DELAYED_NS=, UNDELAYED_NS=, ADDED_NS=.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"cclab/internal/runid"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/vm/delaycheck"
	"cclab/tcopt/agent"
	"cclab/tcopt/intswitch"
	"cclab/topology"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(os.Args) == 5 && os.Args[1] == "-rtt" {
		if err := rtt(ctx, os.Args[2], os.Args[3], os.Args[4]); err != nil {
			fmt.Fprintln(os.Stderr, "guestint:", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: guestint [-rtt] TOPOLOGY.yaml SRC DST")
		os.Exit(2)
	}
	if err := run(ctx, os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "guestint:", err)
		os.Exit(1)
	}
}

func rtt(ctx context.Context, file, src, dst string) error {
	plan, err := topology.Load(file)
	if err != nil {
		return err
	}
	r, err := delaycheck.Measure(ctx, plan, src, dst, netbuild.Options{DefaultCC: "cubic"}, 100)
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	fmt.Printf("ENGINE=%s\nCONFIGURED_NS=%d\nDELAYED_NS=%d\nUNDELAYED_NS=%d\nADDED_NS=%d\n",
		r.Engine, r.Configured.Nanoseconds(), r.Delayed.Nanoseconds(), r.Undelayed.Nanoseconds(), r.Added.Nanoseconds())
	return nil
}

func run(ctx context.Context, file, src, dst string) error {
	plan, err := topology.Load(file)
	if err != nil {
		return err
	}
	dstNode, ok := plan.Node(dst)
	if !ok {
		return fmt.Errorf("%s: no node %s", file, dst)
	}
	if _, ok := plan.Node(src); !ok {
		return fmt.Errorf("%s: no node %s", file, src)
	}
	id := runid.New()
	// Per-packet INT: offloads off (netbuild's default), TCP timestamps off.
	net, err := netbuild.Up(ctx, id, plan, netbuild.Options{DefaultCC: "cubic"})
	if err != nil {
		return fmt.Errorf("build %s: %w", file, err)
	}
	defer net.Down(context.Background())
	sw, err := intswitch.Attach(ctx, intswitch.Config{Netns: net.Netns, Ports: intswitch.PortsFromPlan(net.Plan, intswitch.Marking{})})
	if err != nil {
		fmt.Printf("UNAVAILABLE INT switch: %s\n", oneLine(err))
		net.Down(context.Background())
		os.Exit(3)
	}
	defer sw.Close()
	ag, err := agent.Attach(ctx, id, agent.Options{})
	if err != nil {
		fmt.Printf("UNAVAILABLE INT host agent: %s\n", oneLine(err))
		sw.Close()
		net.Down(context.Background())
		os.Exit(3)
	}
	defer ag.Close()
	fmt.Printf("RUN=%s\nNS_SRC=%s\nNS_DST=%s\nDST_ADDR=%s\nCGROUP=%s\nSWITCH_ATTACH=%s\nREADY\n",
		id, net.Netns(src), net.Netns(dst), dstNode.Addr, ag.Cgroup(), sw.Mode())
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
	st, err := ag.Stats()
	if err == nil {
		fmt.Fprintf(os.Stderr, "guestint: agent: %d options written, %d echoes written, %d echoes parsed\n",
			st.OptionsWritten, st.EchoesWritten, st.EchoesParsed)
	}
	return nil
}

// oneLine is an error on one line (the guest's report keeps only lines
// that begin with UNAVAILABLE): a verifier log's lines joined, its head
// and its last 2000 characters, where the verifier says why.
func oneLine(err error) string {
	s := strings.Join(strings.Fields(strings.ReplaceAll(err.Error(), "\n", " | ")), " ")
	if len(s) > 2400 {
		s = s[:400] + " ... " + s[len(s)-2000:]
	}
	return s
}
