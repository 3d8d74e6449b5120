package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/reproduce"
)

func newReproduceCmd() *cobra.Command {
	var out, docs, root string
	var asJSON, noPage, list, pageOnly, quiet bool
	var retries int
	cmd := &cobra.Command{
		Use:   "reproduce NAME...|all",
		Short: "Run the papers' headline experiments (experiments/reproduce/) and regenerate docs/results.md",
		Long: `reproduce runs the reproduction suite's experiments (or the named ones),
analyses every run, checks each paper claim against the measurements
(agrees, disagrees, could not run and why) and regenerates docs/results.md,
its figures under docs/results/ and the health page
docs/results/health.md. Each experiment file (experiments/reproduce/*.yaml)
holds the run (topology, laws, variants, workload) and, under reproduce:,
the paper's claims with the paper's numbers; the run registers its laws
with the calibrated parameters as ` + "`cclab run`" + ` does, once per seed. A
claim read only on runs judged degraded is not counted as agreeing.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				if root == "" {
					var err error
					if root, err = findRoot(); err != nil {
						return err
					}
				}
				return printList(cmd.OutOrStdout(), root)
			}
			if pageOnly {
				if root == "" && docs == "" {
					var err error
					if root, err = findRoot(); err != nil {
						return err
					}
				}
				if docs == "" {
					docs = filepath.Join(root, "docs")
				}
				if root != "" {
					exps, err := reproduce.Load(root)
					if err != nil {
						return err
					}
					n, err := reproduce.Rejudge(exps, docs)
					if err != nil {
						return err
					}
					fmt.Fprintf(cmd.ErrOrStderr(), "judged the claims of %d stored experiments again against %s\n", n, filepath.Join(root, reproduce.Dir))
				}
				if err := reproduce.Publish(nil, docs); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "regenerated %s from %s\n", filepath.Join(docs, reproduce.ResultsPage),
					filepath.Join(docs, reproduce.ResultsDir, reproduce.StoreFile))
				return nil
			}
			if len(args) == 0 {
				return fmt.Errorf("name an experiment or all (--list shows them)")
			}
			if root == "" {
				var err error
				if root, err = findRoot(); err != nil {
					return err
				}
			}
			exps, err := reproduce.Find(root, args)
			if err != nil {
				return err
			}
			logw := cmd.ErrOrStderr()
			if quiet {
				logw = io.Discard
			}
			opt := reproduce.Options{Root: root, Out: out, Log: logw, Versions: buildVersion(), Retries: retries, Wait: true}
			outs, runErr := reproduce.Run(cmd.Context(), exps, opt)
			if !noPage && len(outs) > 0 {
				if docs == "" {
					docs = filepath.Join(root, "docs")
				}
				if err := reproduce.Publish(outs, docs); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s\n", filepath.Join(docs, reproduce.ResultsPage))
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(outs); err != nil {
					return err
				}
			} else {
				printVerdicts(cmd.OutOrStdout(), outs)
			}
			return runErr
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&out, "out", filepath.Join("results", "reproduce"), "parent directory of the run directories")
	fl.IntVar(&retries, "retries", 1, "run a seed's variants judged degraded again, up to this many times (their earlier verdicts are kept on the page)")
	fl.BoolVar(&quiet, "quiet", false, "no progress on stderr (the verdicts still print)")
	fl.StringVar(&docs, "docs", "", "where results.md and results/ are (default ROOT/docs)")
	fl.StringVar(&root, "root", "", "the cclab repository holding experiments/reproduce (default: found from the working directory)")
	fl.BoolVar(&asJSON, "json", false, "print the outcomes as JSON")
	fl.BoolVar(&noPage, "no-page", false, "do not regenerate the results page")
	fl.BoolVar(&list, "list", false, "list the experiments")
	fl.BoolVar(&pageOnly, "page-only", false, "regenerate the pages from docs/results/results.json without running, judging the stored runs' claims again against the experiment files")
	return cmd
}

// findRoot walks up from the working directory to the directory holding
// experiments/reproduce.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if st, err := os.Stat(filepath.Join(d, "experiments", "reproduce")); err == nil && st.IsDir() {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no experiments/reproduce above %s: run from the cclab repository or give --root", dir)
		}
	}
}

func printList(w io.Writer, root string) error {
	exps, err := reproduce.Load(root)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tPAPER\tCOMPARES\tSEEDS\tCLAIMS")
	for _, e := range exps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\n", e.Name, e.Paper, strings.Join(e.Compare, " "), len(e.Seeds), len(e.Claims))
	}
	return tw.Flush()
}

func printVerdicts(w io.Writer, outs []*reproduce.Outcome) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "EXPERIMENT\tCLAIM\tVERDICT\tMEASURED / WHY")
	for _, o := range outs {
		for _, c := range o.Claims {
			m := c.Measured()
			if c.Reason != "" {
				m = strings.TrimSpace(m + " " + c.Reason)
			}
			if len(m) > 110 {
				m = m[:107] + "..."
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", o.Name, c.ID, c.Verdict, m)
		}
	}
	tw.Flush()
}
