package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"

	"cclab/orchestrator/runner"
	"cclab/rundir"
)

// buildRevision and buildModified are set by the Makefile (-ldflags -X)
// from git, for builds without Go's VCS stamp (-buildvcs=false).
var buildRevision, buildModified string

// buildVersion describes the binary: module version and VCS revision when
// the build recorded them (Go's stamp, else the Makefile's).
func buildVersion() map[string]string {
	v := map[string]string{"cclab": "devel"}
	if buildRevision != "" {
		v["revision"], v["modified"] = buildRevision, buildModified
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	v["go"] = info.GoVersion
	if info.Main.Version != "" && info.Main.Version != "(devel)" {
		v["cclab"] = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			v["revision"] = s.Value
		case "vcs.modified":
			v["modified"] = s.Value
		}
	}
	return v
}

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print cclab's version, the commit it was built from, and the kernel",
		Long: "Prints what run.json records of every run as its provenance: cclab's version,\n" +
			"the commit the binary was built from (stamped by `make build`; \"unknown\" for a\n" +
			"plain `go build`) and whether the tree had uncommitted changes, Go's version,\n" +
			"and the kernel it runs on.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			k := runner.ThisKernel()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(struct {
					Versions map[string]string `json:"versions"`
					Kernel   rundir.Kernel     `json:"kernel"`
				}{v, k})
			}
			rev := v["revision"]
			if rev == "" {
				rev = "unknown"
			}
			if v["modified"] == "true" {
				rev += ", modified"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cclab %s (revision %s, %s)\nkernel %s (%s)\n", v["cclab"], rev, v["go"], k.Release, k.Version)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON: versions and kernel, as run.json names them")
	return cmd
}
