package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cclab/kmod/law"
	"cclab/kmod/lawload"
	"cclab/orchestrator/calibrate"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/netbuild"
	"cclab/topology"
)

// calibrateFlags are the command's settings beyond the host options.
type calibrateFlags struct {
	run           string
	jsonOut       bool
	idle, loaded  int
	engine        string
	laws          []string
	sets          []string
	hostOpt       *netbuild.Options
	pinned        law.Settings // sets, typed
	calibrateLaws []string     // laws, or all of cclab's
}

// calibration is what `cclab calibrate --json` prints.
type calibration struct {
	Calibration *calibrate.Result  `json:"calibration"`
	Derived     *calibrate.Derived `json:"derived"`
}

func newCalibrateCmd() *cobra.Command {
	f := &calibrateFlags{}
	cmd := &cobra.Command{
		Use:   "calibrate TOPOLOGY",
		Short: "Measure a topology's path RTTs and print the law parameters they give",
		Long: `Calibrate builds the topology under a fresh run id, measures every class of
path (host pairs with the same number of switches) idle and beside a flow
paced at 90% of the path's bottleneck, derives the laws' time constants
from the loaded RTT floors as cclab run does, tears the topology down and
prints the measurements, the derived parameters with their rules and the
` + "`cclab cc load`" + ` line that registers the laws with them. --set pins a
parameter: it is reported as pinned and kept in the line as given.
Progress goes to stderr.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			plan, err := f.check(args[0])
			if err != nil {
				return err
			}
			out, err := runCalibration(cmd.Context(), plan, f, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if f.jsonOut {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			printCalibration(cmd.OutOrStdout(), plan, out, f)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.run, "run", "", "run id (default: a fresh one); its leftovers are removed first")
	fl.BoolVar(&f.jsonOut, "json", false, `print {"calibration": ..., "derived": ...} as JSON`)
	fl.IntVar(&f.idle, "samples-idle", 100, "RTT samples per path class, idle")
	fl.IntVar(&f.loaded, "samples-loaded", 200, "RTT samples per path class, beside the load")
	fl.StringVar(&f.engine, "delay-engine", "auto", "what holds packets for the links' delay: auto, netem or line")
	fl.StringSliceVar(&f.laws, "laws", nil, "laws to derive parameters for, comma-separated (default: all of "+strings.Join(lawload.Laws(), ", ")+")")
	fl.StringArrayVar(&f.sets, "set", nil, "pin a parameter, law.name=value or name=value (repeatable); reported as pinned")
	f.hostOpt = optionFlags(cmd)
	return cmd
}

// check validates everything given before anything is built: the flags,
// the topology file, that it has paths to measure, and the pinned values
// (by the laws' own parameter checks).
func (f *calibrateFlags) check(file string) (*topology.Plan, error) {
	if f.idle < 1 || f.loaded < 1 {
		return nil, fmt.Errorf("--samples-idle and --samples-loaded must be at least 1 (got %d and %d)", f.idle, f.loaded)
	}
	engine, err := delay.ParseEngine(f.engine)
	if err != nil {
		return nil, fmt.Errorf("--delay-engine: %w", err)
	}
	f.hostOpt.DelayEngine = engine
	f.calibrateLaws = f.laws
	if len(f.calibrateLaws) == 0 {
		f.calibrateLaws = lawload.Laws()
	}
	for i, l := range f.calibrateLaws {
		if !slices.Contains(lawload.Laws(), l) {
			return nil, fmt.Errorf("--laws: unknown law %q (have: %s)", l, strings.Join(lawload.Laws(), ", "))
		}
		if slices.Contains(f.calibrateLaws[:i], l) {
			return nil, fmt.Errorf("--laws: %s named twice", l)
		}
	}
	// The law table's checks, in user space: the values in range, the
	// laws named by law.name among those given.
	ids, err := law.ParseLaws(f.calibrateLaws)
	if err != nil {
		return nil, fmt.Errorf("--laws: %w", err)
	}
	if f.pinned, err = law.ParseAssignments(f.sets); err != nil {
		return nil, fmt.Errorf("--set: %w", err)
	}
	if err := f.pinned.Check(ids); err != nil {
		return nil, fmt.Errorf("--set: %w", err)
	}
	plan, err := topology.Load(file)
	if err != nil {
		return nil, err
	}
	classes, err := calibrate.Classes(plan)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(classes) == 0 {
		return nil, fmt.Errorf("%s: topology %s has no pair of hosts to measure", file, plan.Name)
	}
	return plan, nil
}

// runCalibration builds plan, serves its delay line, calibrates every
// class of path and derives the laws' parameters. The network is torn
// down before it returns, whatever happened, also when ctx is cancelled
// (SIGINT/SIGTERM: main's context).
func runCalibration(ctx context.Context, plan *topology.Plan, f *calibrateFlags, log io.Writer) (out *calibration, err error) {
	id, err := runIDFlag(f.run)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "building %s (%d namespaces, %d links) as run %s...\n", plan.Name, len(plan.Nodes), len(plan.Links), id)
	n, err := netbuild.Up(ctx, id, plan, *f.hostOpt)
	if err != nil {
		return nil, err // Up cleaned up; its errors say "build: ..."
	}
	defer func() {
		if derr := n.Down(context.WithoutCancel(ctx)); derr != nil {
			if err == nil {
				err = fmt.Errorf("tear down run %s: %w", id, derr)
			} else {
				err = fmt.Errorf("%w (and tearing down run %s: %v)", err, id, derr)
			}
			return
		}
		fmt.Fprintf(log, "run %s is down\n", id)
	}()
	srv, err := n.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: n.Namespaces()})
	if err != nil {
		return nil, fmt.Errorf("serve the delay line: %w", err)
	}
	if srv != nil {
		defer srv.Stop()
	}
	hosts := map[string]flows.Host{}
	for _, h := range plan.Hosts() {
		hosts[h.Name] = flows.Host{Netns: n.Netns(h.Name), Addr: h.Addr}
	}
	res, err := calibrate.Run(ctx, plan, calibrate.Options{Hosts: hosts, IdleSamples: f.idle, LoadedSamples: f.loaded, Log: log})
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("calibrate %s: interrupted: %w", plan.Name, err)
		}
		return nil, fmt.Errorf("calibrate %s: %w", plan.Name, err)
	}
	d, err := calibrate.Derive(res, plan, f.calibrateLaws, f.pinned)
	if err != nil {
		return nil, fmt.Errorf("calibrate %s: %w", plan.Name, err)
	}
	return &calibration{Calibration: res, Derived: d}, nil
}

// us prints nanoseconds as microseconds.
func us(ns int64) string { return fmt.Sprintf("%.1f", float64(ns)/1e3) }

// printCalibration writes the classes, the derived parameters and the
// `cclab cc load` line.
func printCalibration(w io.Writer, plan *topology.Plan, c *calibration, f *calibrateFlags) {
	r, d := c.Calibration, c.Derived
	fmt.Fprintf(w, "%s (%s): %d path class(es) measured in %v\n", plan.Name, plan.Kind, len(r.Classes), time.Duration(r.ElapsedNs).Round(time.Millisecond))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCHES\tPAIRS\tMEASURED\tCONFIGURED RTT us\tIDLE P50 us\tLOADED FLOOR us\t+ MTU us\tTCP SRTT us\tLOAD Mbit/s (paced)")
	for _, k := range r.Classes {
		fmt.Fprintf(tw, "%d\t%d\t%s -> %s\t%s\t%s\t%s\t%s\t%s\t%.1f (%.1f)\n", k.Switches, k.Pairs, k.Src, k.Dst,
			us(k.ConfiguredNs), us(k.Idle.P50Ns), us(k.FloorNs), us(k.MTUSerialiseNs), us(k.TCPFloorNs), float64(k.AchievedBps)/1e6, float64(k.LoadBps)/1e6)
	}
	tw.Flush()

	fmt.Fprintln(w)
	if len(d.Params) == 0 {
		fmt.Fprintf(w, "no derived parameters for %s\n", strings.Join(f.calibrateLaws, ", "))
	} else {
		tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "LAW\tPARAMETER\tVALUE\tRULE")
		for _, p := range d.Params {
			v := fmt.Sprint(p.Value)
			if p.Pinned != "" {
				v = fmt.Sprintf("%s (pinned; derived %d)", p.Pinned, p.Value)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Law, p.Name, v, p.Rule)
		}
		tw.Flush()
	}

	// The laws by name unless all of them (cc load's default), the
	// derived settings, then the pinned ones as given.
	line := []string{"cclab", "cc", "load"}
	if len(f.laws) > 0 {
		line = append(line, f.calibrateLaws...)
	}
	line = append(line, d.Settings()...)
	line = append(line, f.sets...)
	fmt.Fprintf(w, "\nregister the laws with them:\n  %s\n", strings.Join(line, " "))
}
