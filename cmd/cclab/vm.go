package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"cclab/orchestrator/vm"
)

func newVMCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vm",
		Short: "The kernel modules on Debian's kernels under qemu",
	}
	cmd.AddCommand(newVMTestCmd())
	return cmd
}

func newVMTestCmd() *cobra.Command {
	var (
		kernels []string
		repo    string
		cache   string
		timeout time.Duration
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Build the law modules for Debian's 6.1 and 6.12 kernels, boot each under qemu and run the guest test",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			progress := cmd.ErrOrStderr()
			var results []*vm.Result
			var failed []string
			for _, k := range kernels {
				r, err := vm.Run(cmd.Context(), vm.Config{Repo: repo, Cache: cache, Series: k, Timeout: timeout, Progress: progress})
				if err == nil {
					err = r.Err(vm.Required(r))
				}
				if err != nil {
					if r != nil && !asJSON {
						fmt.Fprintf(progress, "guest console (%s):\n%s\n", k, r.Console)
					}
					failed = append(failed, fmt.Sprintf("%s: %v", k, err))
				}
				if r != nil {
					results = append(results, r)
				}
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(results); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "KERNEL\tACCEL\tCHECKS\tFAILED\tSECONDS\tNOTES")
				for _, r := range results {
					bad := 0
					for _, c := range r.Checks {
						if !c.Pass {
							bad++
						}
					}
					fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.0f\t%s\n", r.Kernel, r.Accel, len(r.Checks), bad, r.Seconds, strings.Join(r.Notes, "; "))
				}
				tw.Flush()
			}
			if len(failed) > 0 {
				return fmt.Errorf("vm test failed: %s", strings.Join(failed, "; "))
			}
			return nil
		},
	}
	wd, _ := os.Getwd()
	cmd.Flags().StringSliceVar(&kernels, "kernel", vm.Series, "Debian kernel series to test (6.1, 6.12)")
	cmd.Flags().StringVar(&repo, "repo", wd, "the cclab source tree (kmod/, tcopt/, scripts/vm/)")
	cmd.Flags().StringVar(&cache, "cache", vm.DefaultCache(), "cache of downloaded kernels and builds")
	cmd.Flags().DurationVar(&timeout, "timeout", 240*time.Second, "limit for one guest's boot and test")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the guests' reports as JSON")
	return cmd
}
