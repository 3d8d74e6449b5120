package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/internal/cc"
)

func newCCCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cc",
		Short: "Register the eBPF builds of the congestion-control laws",
		Long: "Register (load), list and unregister (unload) the eBPF struct_ops builds of\n" +
			"the laws (" + strings.Join(cc.Laws(), ", ") + ") under their own names.\n" +
			"Registrations outlive the command: they are pinned under " + cc.PinDir + ".",
	}
	cmd.AddCommand(newCCLoadCmd(), newCCListCmd(), newCCUnloadCmd())
	return cmd
}

// splitArgs separates law names from name=value settings.
func splitArgs(args []string) (laws, settings []string) {
	for _, a := range args {
		if strings.Contains(a, "=") {
			settings = append(settings, a)
		} else {
			laws = append(laws, a)
		}
	}
	return laws, settings
}

func newCCLoadCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "load [LAW...] [name=value | law.name=value ...]",
		Short: "Register laws (all when none is named) with their parameters",
		Long: "Registers each law's eBPF struct_ops build with the given parameters (the law\n" +
			"table's, `cclab law params --law LAW`). A law cclab registered already with\n" +
			"the same parameters is left as it is; with other parameters the command\n" +
			"fails and names them (cclab cc unload LAW first).",
		RunE: func(cmd *cobra.Command, args []string) error {
			laws, settings := splitArgs(args)
			regs, err := cc.Load(cmd.Context(), laws, settings, cc.Options{})
			if err != nil {
				return err
			}
			for _, r := range regs {
				if r.Existing {
					fmt.Fprintf(cmd.OutOrStdout(), "%s already registered with these parameters: %s\n", r.Name, r.Params)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "registered %s: %s\n", r.Name, r.Params)
			}
			return nil
		},
	}
}

func newCCListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show the laws cclab registered, with their parameters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			regs, err := cc.List(cc.Options{})
			if err != nil {
				return err
			}
			if asJSON {
				if regs == nil {
					regs = []cc.Registration{}
				}
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(regs)
			}
			if len(regs) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no laws registered by cclab (cclab cc load)")
				return nil
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tPARAMETERS")
			for _, r := range regs {
				fmt.Fprintf(tw, "%s\t%s\n", r.Name, r.Params)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newCCUnloadCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "unload [LAW...]",
		Short: "Unregister laws cclab registered (all when none is named)",
		RunE: func(cmd *cobra.Command, args []string) error {
			regs, err := cc.Unload(args, cc.Options{})
			for _, r := range regs {
				fmt.Fprintf(cmd.OutOrStdout(), "unregistered %s\n", r.Name)
			}
			if err == nil && len(regs) == 0 {
				fmt.Fprintln(os.Stderr, "nothing registered by cclab")
			}
			return err
		},
	}
}
