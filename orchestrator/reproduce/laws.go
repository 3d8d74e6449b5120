package reproduce

import (
	"context"
	"fmt"

	"cclab/internal/cc"
)

// RegisterLaw registers n.Law under n.Name with exactly n.Settings
// (through internal/cc, as `cclab cc load` does): nothing to do when it
// already is; a reload when it is registered with other parameters, since
// each experiment states its own base RTT and rates, and a variant such as
// hpcc_vaisf is a second registration of a law under another name.
func RegisterLaw(ctx context.Context, n Need) error {
	want, err := cc.Resolve([]string{n.Law}, n.Settings)
	if err != nil {
		return err
	}
	regs, err := cc.List(cc.Options{})
	if err != nil {
		return err
	}
	for _, r := range regs {
		if r.Name != n.Name {
			continue
		}
		if r.Law == n.Law && r.Params.String() == want[0].String() {
			return nil
		}
		if _, err := cc.Unload([]string{r.Name}, cc.Options{}); err != nil {
			return fmt.Errorf("unload %s to reload it with the experiment's parameters: %w", r.Name, err)
		}
	}
	opts := cc.Options{}
	if n.Name != n.Law {
		opts.Names = map[string]string{n.Law: n.Name}
	}
	if _, err := cc.Load(ctx, []string{n.Law}, n.Settings, opts); err != nil {
		return fmt.Errorf("register %s: %w", n.Name, err)
	}
	return nil
}
