package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"cclab/internal/hostlock"
	"cclab/reproduce"
)

// Exit codes of `cclab sweep run-one` a scheduler can act on.
const (
	exitBusy = 75 // EX_TEMPFAIL: another run holds this host's kernel; requeue
)

// exitError carries a distinct exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

func newSweepCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sweep",
		Short: "Spread the suite's seeds over machines: plan tasks, run one, gather (docs/scale-out.md)",
	}
	cmd.AddCommand(newSweepPlanCmd(), newSweepRunOneCmd(), newSweepGatherCmd())
	return cmd
}

func newSweepPlanCmd() *cobra.Command {
	var opt reproduce.PlanOptions
	var eng reproduce.EngineOptions
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plan EXPERIMENT...|all --out DIR",
		Short: "Write plan.json (one task per experiment and seed) and the Slurm and Kubernetes files to run it",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opt.Root == "" {
				var err error
				if opt.Root, err = findRoot(); err != nil {
					return err
				}
			}
			opt.Revision = buildVersion()["revision"]
			p, err := reproduce.MakePlan(args, opt)
			if err != nil {
				return err
			}
			if err := p.Write(); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(p.Out, "logs"), 0o755); err != nil {
				return err
			}
			_, id, err := reproduce.ReadPlan(filepath.Join(p.Out, reproduce.PlanFile))
			if err != nil {
				return err
			}
			if eng.Cclab == "" {
				if eng.Cclab, err = os.Executable(); err != nil {
					return err
				}
			}
			if err := p.WriteEngines(id, eng); err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(p)
			}
			w := cmd.OutOrStdout()
			for _, e := range p.Experiments {
				fmt.Fprintf(w, "%-22s %d seeds\n", e.Name, len(e.Seeds))
			}
			fmt.Fprintf(w, "%d tasks in %s (plan %s)\n", len(p.Tasks), filepath.Join(p.Out, reproduce.PlanFile), id[:12])
			fmt.Fprintf(w, "Slurm: bash %s; Kubernetes: kubectl apply -f %s; here: cclab sweep run-one %s --index I\n",
				filepath.Join(p.Out, reproduce.SlurmSubmitFile), filepath.Join(p.Out, reproduce.KubeJobFile), filepath.Join(p.Out, reproduce.PlanFile))
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opt.Out, "out", "", "the plan's directory, one every node can write (required)")
	fl.IntVar(&opt.Seeds, "seeds", 0, "seeds per experiment, 1..N (default: each file's own)")
	fl.IntVar(&opt.Flows, "flows", 0, "enough seeds for every per-flow claim to pool this many flows (counted from the planned workloads)")
	fl.IntVar(&opt.MaxSeeds, "max-seeds", 1000, "the most seeds --flows may take")
	fl.StringVar(&opt.Root, "root", "", "the cclab repository holding experiments/reproduce (default: found from the working directory)")
	fl.StringVar(&eng.Cclab, "cclab", "", "the cclab binary the tasks run, at this path on every node (default: this one)")
	fl.IntVar(&eng.Parallel, "parallel", 0, "tasks at once (Slurm's %K, the Job's parallelism; default all)")
	fl.StringVar(&eng.Image, "image", "", "container image for the Kubernetes Job (default cclab:<revision>)")
	fl.IntVar(&eng.Retries, "retries-per-index", 1, "a Kubernetes index's retries (backoffLimitPerIndex)")
	fl.BoolVar(&asJSON, "json", false, "print the plan as JSON")
	return cmd
}

func newSweepRunOneCmd() *cobra.Command {
	var index int
	var fromEnv, lockPath string
	var wait, quiet bool
	var retries int
	cmd := &cobra.Command{
		Use:   "run-one PLAN (--index I | --index-from-env VAR)",
		Short: "Run one task of a plan into its directory (a finished task returns at once; exit 75 when the host is busy)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if fromEnv != "" {
				v, ok := os.LookupEnv(fromEnv)
				if !ok {
					return fmt.Errorf("--index-from-env %s: not set", fromEnv)
				}
				i, err := strconv.Atoi(v)
				if err != nil {
					return fmt.Errorf("--index-from-env %s=%q: %w", fromEnv, v, err)
				}
				index = i
			} else if !cmd.Flags().Changed("index") {
				return errors.New("give --index I or --index-from-env VAR")
			}
			log := cmd.ErrOrStderr()
			if quiet {
				log = nil
			}
			m, done, err := reproduce.RunOne(cmd.Context(), args[0], index, reproduce.RunOneOptions{
				Revision: buildVersion()["revision"], Log: log, Wait: wait, LockPath: lockPath, Retries: retries, Versions: buildVersion()})
			if errors.Is(err, hostlock.ErrBusy) {
				return exitError{exitBusy, err}
			}
			if err != nil {
				return err
			}
			state := "ran"
			if done {
				state = "already done"
			}
			fid := "faithful"
			if !m.Faithful {
				fid = "degraded (see its marker)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "task %d (%s, seed %d): %s, %s\n", m.Task.Index, m.Task.Experiment, m.Task.Seed, state, fid)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.IntVar(&index, "index", 0, "the task's index in the plan")
	fl.StringVar(&fromEnv, "index-from-env", "", "read the index from this variable (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX)")
	fl.BoolVar(&wait, "wait", false, "wait for the host lock instead of exiting 75")
	fl.StringVar(&lockPath, "lock", hostlock.DefaultPath, "the host lock")
	fl.IntVar(&retries, "retries", 1, "run a variant judged degraded again, up to this many times")
	fl.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	return cmd
}

func newSweepGatherCmd() *cobra.Command {
	var docs string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "gather PLAN",
		Short: "Pool every finished task through the claims' statistics and write the results page",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if docs == "" {
				docs = filepath.Join(filepath.Dir(args[0]), "docs")
			}
			r, err := reproduce.Gather(args[0], docs)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(r)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%d of %d tasks done", r.Done, r.Tasks)
			for n, k := range r.Nodes {
				fmt.Fprintf(w, "; %d on %s", k, n)
			}
			fmt.Fprintln(w)
			for _, t := range r.Missing {
				fmt.Fprintf(w, "missing: task %d (%s, seed %d)\n", t.Index, t.Experiment, t.Seed)
			}
			for _, d := range r.Degraded {
				fmt.Fprintf(w, "degraded: task %d (%s, seed %d) on %s: %s\n", d.Task.Index, d.Task.Experiment, d.Task.Seed, d.Node, d.Why)
			}
			for _, s := range r.Refused {
				fmt.Fprintf(w, "refused: %s\n", s)
			}
			printVerdicts(w, r.Outcomes)
			fmt.Fprintf(w, "wrote %s\n", filepath.Join(docs, reproduce.ResultsPage))
			return nil
		},
	}
	cmd.Flags().StringVar(&docs, "docs", "", "where results.md and results/ go (default: docs/ beside the plan)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}
