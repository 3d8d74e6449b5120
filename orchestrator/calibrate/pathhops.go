package calibrate

import (
	"errors"
	"fmt"

	"cclab/kmod/lawload"
	"cclab/topology"
)

// SetPathHops gives the laws that count their path's hops (Swift) this
// topology's: the switches between every ordered pair of hosts. Without
// such a law registered there is no table, and nothing to do.
func SetPathHops(plan *topology.Plan, opts lawload.Options) error {
	pds, err := plan.PathDelays()
	if err != nil {
		return err
	}
	paths := make([]lawload.PathHops, 0, len(pds))
	for _, pd := range pds {
		src, _ := plan.Node(pd.Src)
		dst, _ := plan.Node(pd.Dst)
		paths = append(paths, lawload.PathHops{Src: src.Addr, Dst: dst.Addr, Switches: uint32(pd.Switches)})
	}
	if err := lawload.SetPathHops(opts, paths); err != nil && !errors.Is(err, lawload.ErrNoPathTable) {
		return fmt.Errorf("path table: %w", err)
	}
	return nil
}
