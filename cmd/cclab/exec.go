package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/live"
	"cclab/orchestrator/netbuild"
)

func newExecCmd() *cobra.Command {
	var run string
	cmd := &cobra.Command{
		Use:   "exec [--run ID] NODE -- CMD [ARG...]",
		Short: "Run a command in a node's namespace of a live topology (its exit status is the command's)",
		Long: `Runs CMD in NODE's network namespace, as ip netns exec does, and in the
run's cgroup, so that the INT host agent reserves and echoes the option on
the command's sockets (iperf3, ping, ss, tcpdump...). cclab replaces itself
with the command: its exit status, signals and terminal are the command's.`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.ArgsLenAtDash() != 1 {
				return fmt.Errorf("write: cclab exec [--run ID] NODE -- CMD [ARG...]")
			}
			id, err := pickUp(run)
			if err != nil {
				return err
			}
			node := args[0]
			n, err := netbuild.Open(id)
			if err != nil {
				return err
			}
			if _, ok := n.Plan.Node(node); !ok {
				return fmt.Errorf("run %s (%s) has no node %q", id, n.Plan.Name, node)
			}
			ipPath, err := exec.LookPath("ip")
			if err != nil {
				return fmt.Errorf("cclab exec needs iproute2's ip: %w", err)
			}
			// The run's cgroup, where the host agent acts (when attached).
			if st, err := live.ReadState(id); err == nil && st.Cgroup != "" {
				procs := filepath.Join(st.Cgroup, "cgroup.procs")
				if err := os.WriteFile(procs, []byte(strconv.Itoa(os.Getpid())), 0); err != nil {
					return fmt.Errorf("join the run's cgroup %s: %w", st.Cgroup, err)
				}
			}
			argv := append([]string{"ip", "netns", "exec", n.Netns(node)}, args[1:]...)
			// The command lives as long as it would in the shell: no
			// parent-death signal of cclab's (main's DieWithParent) on
			// the thread that becomes it.
			runtime.LockOSThread()
			unix.Prctl(unix.PR_SET_PDEATHSIG, 0, 0, 0, 0)
			return syscall.Exec(ipPath, argv, os.Environ())
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run id (default: the one topology up)")
	return cmd
}

// pickUp is --run, or the one run whose namespaces exist.
func pickUp(run string) (runid.ID, error) {
	if run != "" {
		return runid.Parse(run)
	}
	if id, err := live.Pick(""); err == nil {
		return id, nil
	}
	ids, err := cleanup.RunsWithNamespaces()
	if err != nil {
		return "", err
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("no topology is up (cclab topo up FILE brings one up)")
	case 1:
		return ids[0], nil
	}
	return "", fmt.Errorf("%d runs are up (%v): say which with --run ID", len(ids), ids)
}
