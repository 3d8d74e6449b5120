package main

import (
	"encoding/json"
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
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
		Short: "Print the version of cclab",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := buildVersion()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(v)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cclab %s (revision %s, %s)\n", v["cclab"], v["revision"], v["go"])
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}
