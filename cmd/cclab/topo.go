package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
	"cclab/orchestrator/live"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

func newTopoCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topo",
		Short: "Build, show, tear down and benchmark topologies (topologies/*.yaml)",
	}
	cmd.AddCommand(newTopoUpCmd(), newTopoDownCmd(), newTopoShowCmd(), newTopoBenchCmd(), newTopoServeCmd(), newTopoStatusCmd())
	return cmd
}

func runIDFlag(s string) (runid.ID, error) {
	if s == "" {
		return runid.New(), nil
	}
	return runid.Parse(s)
}

// optionFlags binds the host options of netbuild to flags.
func optionFlags(cmd *cobra.Command) *netbuild.Options {
	opt := hostOptionFlags(cmd)
	cmd.Flags().StringVar(&opt.DefaultCC, "cc", opt.DefaultCC, "default congestion control of the hosts")
	return opt
}

// hostOptionFlags binds the host options but the congestion control
// (topo up's --cc registers a law first).
func hostOptionFlags(cmd *cobra.Command) *netbuild.Options {
	opt := netbuild.DefaultOptions()
	f := cmd.Flags()
	f.BoolVar(&opt.TCPTimestamps, "timestamps", opt.TCPTimestamps, "TCP timestamps on the hosts")
	f.IntVar(&opt.ECN, "ecn", opt.ECN, "net.ipv4.tcp_ecn of the hosts (0, 1, 2)")
	f.BoolVar(&opt.TSO, "tso", opt.TSO, "TCP segmentation offload on every interface")
	f.BoolVar(&opt.GSO, "gso", opt.GSO, "generic segmentation offload on every interface")
	f.BoolVar(&opt.GRO, "gro", opt.GRO, "generic receive offload on every interface")
	f.BoolVar(&opt.TxChecksum, "tx-csum", opt.TxChecksum, "tx checksum offload on every interface")
	f.IntVar(&opt.GSOMaxSize, "gso-max-size", 0, "gso_max_size of every interface in bytes (0: kernel default)")
	return &opt
}

func newTopoUpCmd() *cobra.Command {
	var run string
	var jsonOut bool
	var opt *netbuild.Options
	lf := &liveFlags{}
	cmd := &cobra.Command{
		Use:   "up FILE [name=value...]",
		Short: "Build a topology and keep it working: delay line, INT switch, host agent (and --cc LAW); prints the run id",
		Long: `Builds the topology and starts its supervisor, a background process that
serves the links' delay line, holds the INT switch on every switch port and
the host agent on the run's cgroup, and answers cclab topo status, cclab
link set and cclab watch. It survives the shell that started it; cclab topo
down (or cclab clean --run ID) stops it and removes everything.
With --cc LAW the law is registered with the parameters calibrated for this
topology (name=value arguments pin some) and made the hosts' default
congestion control. Run commands in a node with cclab exec NODE -- CMD.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := runIDFlag(run)
			if err != nil {
				return err
			}
			settings := args[1:]
			if err := lf.check(settings); err != nil {
				return err
			}
			p, err := topology.Load(args[0])
			if err != nil {
				return err
			}
			if err := live.InUse(id); err != nil {
				return err
			}
			log := cmd.ErrOrStderr()
			fmt.Fprintf(log, "building %s (%d namespaces, %d links) as run %s...\n", p.Name, len(p.Nodes), len(p.Links), id)
			n, err := netbuild.Up(cmd.Context(), id, p, *opt)
			if err != nil {
				return err
			}
			law, err := func() (*live.Law, error) {
				if err := recordTopoSource(id, args[0]); err != nil {
					return nil, err
				}
				return upLive(cmd.Context(), n, lf, settings, log)
			}()
			if err != nil {
				return errors.Join(err, n.Down(context.WithoutCancel(cmd.Context())))
			}
			if jsonOut {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"run": id, "timing": n.Timing, "law": law})
			}
			fmt.Fprintf(log, "up in %v (namespaces %v, links %v, configure %v); namespaces are %s*\n",
				n.Timing.Total.Round(1e6), n.Timing.Namespaces.Round(1e6), n.Timing.Links.Round(1e6), n.Timing.Configure.Round(1e6), id.Prefix())
			if law != nil {
				fmt.Fprintf(log, "hosts' congestion control: %s %s\n", law.Name, strings.Join(law.Settings, " "))
			}
			fmt.Fprintf(log, "try: cclab exec --run %s %s -- ping -c 3 %s; cclab topo status --run %s; tear down with: cclab topo down --run %s\n",
				id, p.Hosts()[0].Name, p.Hosts()[len(p.Hosts())-1].Addr, id, id)
			fmt.Fprintln(cmd.OutOrStdout(), id)
			return nil
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run id (default: a new random one)")
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the run id, timing and law as JSON")
	opt = hostOptionFlags(cmd)
	lf.bind(cmd)
	return cmd
}

// topoSourceFile, in a run's state directory, names the topology file
// `cclab topo up` built it from, so that `cclab topo down FILE` finds it.
const topoSourceFile = "topo-source.json"

type topoSource struct {
	File string `json:"file"` // absolute path
}

func recordTopoSource(id runid.ID, file string) error {
	abs, err := filepath.Abs(file)
	if err != nil {
		return fmt.Errorf("record topology source: %w", err)
	}
	return cleanup.WriteJSON(id, topoSourceFile, topoSource{File: abs})
}

// runsUpFrom lists the runs `cclab topo up` built from file that are
// still up (have a state directory), in name order.
func runsUpFrom(file string) ([]runid.ID, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return nil, err
	}
	ids, err := cleanup.RunsWithState()
	if err != nil {
		return nil, err
	}
	var out []runid.ID
	for _, id := range ids {
		data, err := os.ReadFile(filepath.Join(id.StateDir(), topoSourceFile))
		if err != nil {
			continue
		}
		var src topoSource
		if json.Unmarshal(data, &src) == nil && src.File == abs {
			out = append(out, id)
		}
	}
	return out, nil
}

func newTopoDownCmd() *cobra.Command {
	var run string
	cmd := &cobra.Command{
		Use:   "down (--run ID | FILE)",
		Short: "Tear down a run's topology (namespaces, processes in them, pins, state)",
		Long: "Tears down the topology of run ID, or every topology `cclab topo up FILE`\n" +
			"brought up from FILE and that is still up.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var ids []runid.ID
			switch {
			case run != "" && len(args) == 1:
				return fmt.Errorf("give --run ID or FILE, not both")
			case run != "":
				id, err := runid.Parse(run)
				if err != nil {
					return err
				}
				ids = []runid.ID{id}
			case len(args) == 1:
				if _, err := os.Stat(args[0]); err != nil {
					return fmt.Errorf("topology file: %w", err)
				}
				found, err := runsUpFrom(args[0])
				if err != nil {
					return err
				}
				if len(found) == 0 {
					return fmt.Errorf("no topology brought up from %s is up (cclab topo down --run ID for one brought up otherwise)", args[0])
				}
				ids = found
			default:
				return fmt.Errorf("give --run ID or the topology FILE")
			}
			for _, id := range ids {
				n := &netbuild.Network{ID: id}
				if err := n.Down(cmd.Context()); err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "run %s is down\n", id)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&run, "run", "", "run id")
	return cmd
}

func newTopoShowCmd() *cobra.Command {
	var jsonOut bool
	cmd := &cobra.Command{
		Use:   "show FILE",
		Short: "Print the plan of a topology file (nodes, links, addresses) without building it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := topology.Load(args[0])
			if err != nil {
				return err
			}
			if jsonOut {
				enc := json.NewEncoder(os.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(p)
			}
			printPlan(p)
			return nil
		},
	}
	cmd.Flags().BoolVar(&jsonOut, "json", false, "print the full plan as JSON")
	return cmd
}

// printPlan writes a one-screen summary: counts per tier, link tiers with
// their configuration, and the first hosts' addresses.
func printPlan(p *topology.Plan) {
	tiers := map[string]int{}
	for _, n := range p.Nodes {
		tiers[n.Tier]++
	}
	var ts []string
	for t, c := range tiers {
		ts = append(ts, fmt.Sprintf("%d %s", c, t))
	}
	sort.Strings(ts)
	fmt.Printf("%s (%s): %d nodes (%s), %d links\n", p.Name, p.Kind, len(p.Nodes), strings.Join(ts, ", "), len(p.Links))
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TIER\tLINKS\tRATE\tBUFFER\tHOST BUFFER\tDELAY\tEXAMPLE")
	type agg struct {
		n int
		l topology.Link
	}
	byTier := map[string]*agg{}
	var order []string
	for _, l := range p.Links {
		a := byTier[l.Tier]
		if a == nil {
			a = &agg{l: l}
			byTier[l.Tier] = a
			order = append(order, l.Tier)
		}
		a.n++
	}
	for _, t := range order {
		a := byTier[t]
		hb := "-"
		if a.l.HostBuffer != 0 {
			hb = a.l.HostBuffer.String()
		}
		fmt.Fprintf(w, "%s\t%d\t%v\t%v\t%s\t%v\t%s:%s %s - %s:%s %s\n", t, a.n, a.l.Rate, a.l.Buffer, hb, a.l.Delay,
			a.l.A.Node, a.l.A.Iface, a.l.A.Addr, a.l.B.Node, a.l.B.Iface, a.l.B.Addr)
	}
	w.Flush()
	hosts := p.Hosts()
	var hs []string
	for i, h := range hosts {
		if i == 8 {
			hs = append(hs, fmt.Sprintf("... (%d more)", len(hosts)-8))
			break
		}
		hs = append(hs, fmt.Sprintf("%s=%s", h.Name, h.Addr))
	}
	fmt.Printf("hosts: %s\n", strings.Join(hs, " "))
	fmt.Println("switch ports are named after the peer node; hosts use eth0 with a /32 and a default route via their switch")
}
