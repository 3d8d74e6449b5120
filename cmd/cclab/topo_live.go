package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cclab/internal/runid"
	"cclab/internal/units"
	"cclab/orchestrator/live"
	"cclab/orchestrator/netbuild"
	"cclab/tcopt/intswitch"
)

// liveFlags are `topo up`'s settings of the supervisor and the law.
type liveFlags struct {
	noINT bool
	ecn   string
	cc    string
}

func (f *liveFlags) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.BoolVar(&f.noINT, "no-int", false, "do not stamp INT (the switch still counts and samples its ports)")
	fl.StringVar(&f.ecn, "ecn-threshold", "", "switch ports mark CE above this queue (e.g. 75KB; default: no marking)")
	fl.StringVar(&f.cc, "cc", "", "register LAW with the parameters calibrated for this topology and make it the hosts' default (name=value arguments after FILE pin its parameters)")
}

// serveArgs are the supervisor's command line.
func (f *liveFlags) serveArgs(id runid.ID) []string {
	args := []string{"topo", "serve", "--run", string(id)}
	if f.noINT {
		args = append(args, "--no-int")
	}
	if f.ecn != "" {
		args = append(args, "--ecn-threshold", f.ecn)
	}
	return args
}

// check validates the flags and settings before anything is built.
func (f *liveFlags) check(settings []string) error {
	if f.ecn != "" {
		if _, err := units.ParseSize(f.ecn); err != nil {
			return fmt.Errorf("--ecn-threshold: %w", err)
		}
	}
	if f.cc == "" {
		if len(settings) > 0 {
			return fmt.Errorf("%v: name=value settings need --cc LAW", settings)
		}
		return nil
	}
	return live.CheckLaw(f.cc, settings)
}

// upLive starts the supervisor of a network just built and, with --cc,
// gives the hosts their law. On error the caller tears the network down.
func upLive(ctx context.Context, n *netbuild.Network, f *liveFlags, settings []string, log io.Writer) (*live.Law, error) {
	fmt.Fprintf(log, "starting the supervisor (delay line, INT switch, host agent)...\n")
	pid, err := live.Start(ctx, n.ID, f.serveArgs(n.ID), 2*time.Minute)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "supervisor pid %d, log %s/%s\n", pid, n.ID.StateDir(), live.LogFile)
	if f.cc == "" {
		return nil, nil
	}
	fmt.Fprintf(log, "calibrating %s's parameters on this topology...\n", f.cc)
	law, err := live.RegisterLaw(ctx, n, f.cc, settings, log)
	if err != nil {
		return nil, err
	}
	if err := live.SetLaw(n.ID, law); err != nil {
		return nil, err
	}
	return law, nil
}

func newTopoServeCmd() *cobra.Command {
	var run, ecn string
	var noINT bool
	cmd := &cobra.Command{
		Use:    "serve --run ID",
		Short:  "The supervisor of a live topology (started by topo up)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ready := live.ReadyWriter()
			id, err := runid.Parse(run)
			if err != nil {
				ready(err)
				return err
			}
			var m intswitch.Marking
			if ecn != "" {
				k, err := units.ParseSize(ecn)
				if err != nil {
					ready(err)
					return err
				}
				m.Threshold = k
			}
			// The supervisor outlives the shell: only topo down, clean
			// (SIGKILL) or a TERM/INT sent to it end it; a HUP is ignored.
			signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return live.Serve(ctx, id, live.Options{INT: !noINT, Marking: m, Log: os.Stderr}, ready)
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run id")
	cmd.Flags().BoolVar(&noINT, "no-int", false, "do not stamp INT")
	cmd.Flags().StringVar(&ecn, "ecn-threshold", "", "CE-mark above this queue")
	return cmd
}

func newTopoStatusCmd() *cobra.Command {
	var run string
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "status [--run ID]",
		Short: "What a live topology has up, and whether its delay line is healthy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := live.Pick(run)
			if err != nil {
				return err
			}
			c, err := live.Dial(cmd.Context(), id)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.Status(cmd.Context())
			if err != nil {
				return err
			}
			if jsonOut {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"run": id, "status": st})
			}
			printStatus(cmd.OutOrStdout(), id, st)
			return nil
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run id (default: the one topology up)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the status as JSON")
	return cmd
}

func printStatus(w io.Writer, id runid.ID, st *live.Status) {
	s := st.State
	fmt.Fprintf(w, "run %s: up %v, %d nodes, %d links, supervisor pid %d\n", id, st.Uptime.Round(time.Second), st.Nodes, st.Links, s.PID)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if l := st.Line; l != nil {
		verdict := "healthy"
		if !l.Healthy {
			verdict = "NOT HEALTHY: " + strings.Join(l.Problems, "; ")
		}
		fmt.Fprintf(tw, "delay line\t%s, %d ports\t%d packets, late p50 %v (bound %v), p99 %v (bound %v), max %v; drops: line %d, queues %d; CPU %.0f %%\t%s\n",
			s.DelayEngine, s.DelayPorts, l.Packets, l.LateP50, l.BoundP50, l.LateP99, l.BoundP99, l.LateMax, l.BufferDrops, l.QueueDrops, 100*l.CPUShare, verdict)
	} else {
		fmt.Fprintf(tw, "delay line\tnone\t(no link has a delay, or netem holds them)\t\n")
	}
	intNote := "INT off"
	if s.INT {
		intNote = fmt.Sprintf("INT on, %d records stamped", st.Switch.Stamped)
	}
	fmt.Fprintf(tw, "switch\t%d ports\t%s, %d packets dropped, %d CE marks, %d B queued now (longest: %s)\t\n",
		st.Switch.Ports, intNote, st.Switch.DroppedPkts, st.Switch.CEMarked, st.Switch.QueuedNow, orDash(st.Switch.LongestQueue))
	agent := "not attached"
	if s.Agent {
		agent = "cgroup " + s.Cgroup + " (cclab exec puts commands in it)"
	}
	fmt.Fprintf(tw, "host agent\t\t%s\t\n", agent)
	if s.Law != "" {
		fmt.Fprintf(tw, "law\t%s\t%s\t\n", s.Law, strings.Join(s.Settings, " "))
	}
	tw.Flush()
	for _, c := range st.Changes {
		fmt.Fprintf(w, "change %s %s: in force after %v\n", time.Unix(0, c.Requested).Format("15:04:05.000"), describeRequest(c.Request), c.Took)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
