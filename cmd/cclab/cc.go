package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"cclab/kmod/law"
	"cclab/kmod/lawload"
)

func newCCCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cc",
		Short: "Register the eBPF builds of the congestion-control laws",
		Long: "Register (load), list and unregister (unload) the eBPF struct_ops builds of\n" +
			"the laws (" + strings.Join(lawload.Laws(), ", ") + ") under their own names.\n" +
			"Registrations outlive the command: they are pinned under " + lawload.PinDir + ".",
	}
	cmd.AddCommand(newCCLoadCmd(), newCCListCmd(), newCCUnloadCmd())
	// Registrations apart from the real ones, for tests (registration
	// names are machine-wide).
	f := cmd.PersistentFlags()
	f.String("pin-dir", "", "pin directory instead of "+lawload.PinDir)
	f.String("claim-dir", "", "live runs' law claims directory instead of "+lawload.ClaimDir)
	f.StringToString("name", nil, "register LAW under NAME (LAW=NAME)")
	for _, n := range []string{"pin-dir", "claim-dir", "name"} {
		f.MarkHidden(n)
	}
	return cmd
}

// ccOptions are the cc commands' options: the real registrations unless
// the hidden test flags say otherwise.
func ccOptions(cmd *cobra.Command) (lawload.Options, error) {
	var o lawload.Options
	var err error
	f := cmd.Flags()
	if o.PinDir, err = f.GetString("pin-dir"); err != nil {
		return o, err
	}
	if o.ClaimDir, err = f.GetString("claim-dir"); err != nil {
		return o, err
	}
	o.Names, err = f.GetStringToString("name")
	return o, err
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

// checkedArgs is splitArgs with the settings typed and checked against
// the law table in user space (ranges, units, relations) before anything
// is loaded; the settings go on to the loader in its own form.
func checkedArgs(args []string) (laws, settings []string, err error) {
	laws, settings = splitArgs(args)
	ids, err := law.ParseLaws(laws)
	if err != nil {
		return nil, nil, err
	}
	ss, err := law.ParseAssignments(settings)
	if err != nil {
		return nil, nil, err
	}
	if err := ss.Check(ids); err != nil {
		return nil, nil, err
	}
	return laws, ss.Strings(), nil
}

func newCCLoadCmd() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "load [LAW...] [name=value | law.name=value ...]",
		Short: "Register laws (all when none is named) with their parameters",
		Long: "Registers each law's eBPF struct_ops build with the given parameters (the law\n" +
			"table's, `cclab law params --law LAW`). A law cclab registered already with\n" +
			"the same parameters is left as it is; with other parameters the command\n" +
			"fails and names them, and names the live run that relies on them if one\n" +
			"does. --force registers the law again with these parameters (sockets using\n" +
			"the old registration keep it until they close), even under a live run.",
		RunE: func(cmd *cobra.Command, args []string) error {
			laws, settings, err := checkedArgs(args)
			if err != nil {
				return err
			}
			opts, err := ccOptions(cmd)
			if err != nil {
				return err
			}
			if err := lawload.CheckClaims(laws, settings, opts); err != nil && !force {
				return fmt.Errorf("%w; wait for it to end, or --force", err)
			}
			if force {
				_, names, err := lawload.Differing(laws, settings, opts)
				if err != nil {
					return err
				}
				// Unload of no name is all of them: only when one differs.
				if len(names) > 0 {
					if _, err := lawload.Unload(names, opts); err != nil {
						return err
					}
				}
				for _, n := range names {
					fmt.Fprintf(cmd.OutOrStdout(), "unregistered %s: registered with other parameters or by another build (--force)\n", n)
				}
			}
			regs, err := lawload.Load(cmd.Context(), laws, settings, opts)
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
	cmd.Flags().BoolVar(&force, "force", false, "register again laws registered with other parameters, even those a live run relies on")
	return cmd
}

func newCCListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "Show the laws cclab registered, with their parameters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := ccOptions(cmd)
			if err != nil {
				return err
			}
			regs, err := lawload.List(opts)
			if err != nil {
				return err
			}
			if asJSON {
				if regs == nil {
					regs = []lawload.Registration{}
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
	var all, force bool
	cmd := &cobra.Command{
		Use:   "unload (LAW... | --all)",
		Short: "Unregister laws cclab registered (every one with --all)",
		Long: "Unregisters the named laws (or registered names); --all unregisters every\n" +
			"law cclab registered, whoever registered it. A law a live run relies on is\n" +
			"refused, naming the run, unless --force.",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 && !all {
				return fmt.Errorf("name the laws to unregister (cclab cc list), or --all for every law cclab registered, other users' runs' too")
			}
			if len(args) > 0 && all {
				return fmt.Errorf("--all unregisters every law: name none with it")
			}
			opts, err := ccOptions(cmd)
			if err != nil {
				return err
			}
			todo, err := lawload.ToUnload(args, opts)
			if err != nil {
				return err
			}
			names := make([]string, len(todo))
			for i, r := range todo {
				names[i] = r.Name
			}
			if err := lawload.CheckUnclaimed(names, opts); err != nil && !force {
				return fmt.Errorf("%w; nothing unregistered: wait for it to end, or --force", err)
			}
			regs, err := lawload.Unload(args, opts)
			for _, r := range regs {
				fmt.Fprintf(cmd.OutOrStdout(), "unregistered %s\n", r.Name)
			}
			if err == nil && len(regs) == 0 {
				fmt.Fprintln(os.Stderr, "nothing registered by cclab")
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "unregister every law cclab registered")
	cmd.Flags().BoolVar(&force, "force", false, "unregister laws even while a live run relies on them")
	return cmd
}
