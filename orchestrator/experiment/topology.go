package experiment

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"cclab/topology"
)

// LoadTopology reads the topology the experiment names. A file that is
// not there is named as missing, at the position where the experiment
// names it; a topology file's own errors keep their own file and lines,
// below the line of the reference.
func (e *Experiment) LoadTopology() (*topology.Plan, error) {
	if _, err := os.Stat(e.TopologyPath); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s:%v: topology %s: no such file (looked for %s: a topology path is relative to the experiment file)", e.File, e.TopologyPos, e.Topology, e.TopologyPath)
	}
	plan, err := topology.Load(e.TopologyPath)
	if err != nil {
		return nil, fmt.Errorf("%s:%v: topology %s:\n%w", e.File, e.TopologyPos, e.Topology, err)
	}
	return plan, nil
}
