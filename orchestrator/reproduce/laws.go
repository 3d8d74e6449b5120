package reproduce

import (
	"context"
	"fmt"
	"strings"
	"time"

	"cclab/internal/cc"
)

// RegisterLaw registers n.Law under n.Name with exactly n.Settings
// (through internal/cc, as `cclab cc load` does): nothing to do when it
// already is; a reload when it is registered with other parameters, since
// each experiment states its own base RTT and rates, and a variant such as
// hpcc_vaisf is a second registration of a law under another name.
func RegisterLaw(ctx context.Context, n Need) (registered bool, err error) {
	want, err := cc.Resolve([]string{n.Law}, n.Settings)
	if err != nil {
		return false, err
	}
	regs, err := cc.List(cc.Options{})
	if err != nil {
		return false, err
	}
	for _, r := range regs {
		if r.Name != n.Name {
			continue
		}
		if r.Law == n.Law && r.Params.String() == want[0].String() && !r.Stale() {
			return false, nil
		}
		if _, err := cc.Unload([]string{r.Name}, cc.Options{}); err != nil {
			return false, fmt.Errorf("unload %s to reload it with the experiment's parameters: %w", r.Name, err)
		}
	}
	opts := cc.Options{}
	if n.Name != n.Law {
		opts.Names = map[string]string{n.Law: n.Name}
	}
	// The kernel frees an unregistered struct_ops after an RCU grace
	// period: right after an unload the name may still be taken.
	for try := 0; ; try++ {
		_, err := cc.Load(ctx, []string{n.Law}, n.Settings, opts)
		if err == nil {
			return true, nil
		}
		if try == 20 || !strings.Contains(err.Error(), "already registered") {
			return false, fmt.Errorf("register %s: %w", n.Name, err)
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// UnregisterLaws removes the named registrations (cclab's own only).
func UnregisterLaws(names []string) error {
	_, err := cc.Unload(names, cc.Options{})
	return err
}
