package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"cclab/kmod/lawload"
	"cclab/orchestrator/live"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/tcpsample"
	"cclab/orchestrator/watch"
)

func newWatchCmd() *cobra.Command {
	var run string
	var jsonOut, all, signals bool
	var interval time.Duration
	var count int
	cmd := &cobra.Command{
		Use:   "watch [--run ID]",
		Short: "Stream each flow's window, RTT, pacing and delivery rate and each switch port's queue and utilisation",
		Long: `Samples a live topology (cclab topo up) or a running cclab run every
--interval: every TCP socket of the hosts (sock_diag) and, where a
supervisor or the run serves them, every switch port's queue and the
utilisation INT reports (transmitted bytes over the port's rate). A table
on the terminal by default; --json writes one JSON sample per line on
stdout (notes go to stderr). Until Ctrl-C, or --count samples.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if interval < 10*time.Millisecond {
				return fmt.Errorf("--interval %v: at least 10ms (a sample of 16 hosts costs about 18 ms of CPU)", interval)
			}
			id, err := pickUp(run)
			if err != nil {
				return err
			}
			n, err := netbuild.Open(id)
			if err != nil {
				return err
			}
			var hosts []tcpsample.Host
			for _, h := range n.Plan.Hosts() {
				hosts = append(hosts, tcpsample.Host{Name: h.Name, Netns: n.Netns(h.Name)})
			}
			ctx := cmd.Context()
			var ports watch.PortsFunc
			if c, err := live.Dial(ctx, id); err == nil {
				defer c.Close()
				ports = c.Ports
			} else {
				fmt.Fprintf(cmd.ErrOrStderr(), "no switch ports (%v): flows only\n", err)
			}
			opt := watch.Options{Interval: interval, Count: count}
			if signals {
				sig, err := watch.StartSignals(ctx, lawload.Options{})
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "no law signals (%v)\n", err)
				} else {
					defer sig.Stop()
					opt.Signals = sig
				}
			}
			out := cmd.OutOrStdout()
			emit := func(s watch.Sample) error { return printSample(out, s, all) }
			if jsonOut {
				enc := json.NewEncoder(out)
				emit = func(s watch.Sample) error { return enc.Encode(s) }
			}
			err = watch.Stream(ctx, hosts, ports, opt, emit)
			if errors.Is(err, unix.EPIPE) {
				return nil // the reader went away (watch ... | head)
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&run, "run", "", "run id (default: the one topology or run up)")
	fl.BoolVar(&jsonOut, "json", false, "one JSON sample per line")
	fl.BoolVar(&all, "all", false, "every socket and port, not only senders and busy ports")
	fl.DurationVar(&interval, "interval", 100*time.Millisecond, "time between samples")
	fl.IntVar(&count, "count", 0, "stop after this many samples (0: until interrupted)")
	fl.BoolVar(&signals, "signals", true, "each flow's law signal, from the laws' per-ACK trace (a ring-buffer write per ACK while watching)")
	return cmd
}

// printSample writes one sample as a table: the senders, then the ports
// with a queue or traffic (everything with all).
func printSample(w io.Writer, s watch.Sample, all bool) error {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		fmt.Fprint(w, "\033[H\033[2J")
	}
	fmt.Fprintf(w, "%s  %d sockets\n", time.Unix(0, s.AtUnixNs).Format("15:04:05.000"), len(s.Flows))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tLOCAL\tREMOTE\tCC\tCWND KB\tSRTT us\tMIN RTT us\tPACING Mbit/s\tDELIVERY Mbit/s\tRETRANS\tLAW SIGNAL")
	fs := append([]watch.Flow(nil), s.Flows...)
	sort.Slice(fs, func(i, j int) bool { return fs[i].Host+fs[i].Local < fs[j].Host+fs[j].Local })
	for _, f := range fs {
		if !all && !f.Sender {
			continue
		}
		pacing := "-"
		if f.PacingBps > 0 {
			pacing = fmt.Sprintf("%.1f", float64(f.PacingBps)/1e6)
		}
		signal := "-"
		if f.Law != nil {
			signal = fmt.Sprintf("%s=%d %s", f.Law.SignalName, f.Law.Signal, f.Law.Note)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%.0f\t%.0f\t%s\t%.1f\t%d\t%s\n", f.Host, f.Local, f.Remote, f.CC,
			float64(f.CwndBytes)/1e3, f.SRTTUs, f.MinRTTUs, pacing, float64(f.DeliveryBps)/1e6, f.Retrans, signal)
	}
	if len(s.Ports) > 0 {
		fmt.Fprintln(tw, "\nPORT\tQUEUE KB\tUTILISATION\tRATE Mbit/s\tDROPS")
		for _, p := range s.Ports {
			if !all && p.QueueBytes == 0 && p.Utilisation < 0.01 {
				continue
			}
			fmt.Fprintf(tw, "%s/%s\t%.1f\t%.0f %%\t%d\t%d\n", p.Node, p.Iface, float64(p.QueueBytes)/1e3, 100*p.Utilisation, p.RateBps/1e6, p.Dropped)
		}
	}
	return tw.Flush()
}

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
