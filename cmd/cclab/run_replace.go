package main

import (
	"fmt"
	"strings"

	"cclab/internal/runid"
	"cclab/orchestrator/cleanup"
)

// refuseLive refuses a run id that is up, unless replace: a run tears
// down whatever of its id exists before it builds.
func refuseLive(id runid.ID, replace bool) error {
	what, err := cleanup.InUse(id)
	if err != nil || len(what) == 0 || replace {
		return err
	}
	return fmt.Errorf("run id %s is up (%s): a live topology or run has it, or a killed one left it; --replace tears it down first (or `cclab clean --run %s`)", id, strings.Join(what, ", "), id)
}
