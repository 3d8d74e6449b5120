package pfc

import (
	"context"
	"fmt"
	"time"
)

// A change holds RTNL, which the kernel also takes, for tens of
// milliseconds at a time, while it cleans up network namespaces deleted
// before (the previous variant's network: the cleanup runs after the
// deletion returns). A pause issued then lands that late. settle probes
// with changes that change nothing (the port's own rate and burst) until
// settleProbes in a row, settleEvery apart, each took at most
// settleQuick, or settleBudget passed (then it says so, and the run's
// lateness check judges what follows).
const (
	settleProbes = 40
	settleEvery  = 5 * time.Millisecond
	settleQuick  = 300 * time.Microsecond
	settleBudget = 20 * time.Second
)

// settle waits for quick changes on a's port, before the workload: how
// long it waited, and whether they came.
func settle(ctx context.Context, a *Actuator) (int64, bool, error) {
	start := monoNs()
	quick := 0
	for quick < settleProbes {
		if time.Duration(monoNs()-start) > settleBudget {
			return monoNs() - start, false, nil
		}
		t0 := monoNs()
		if err := a.change(a.resumeMsg, a.port.Rate); err != nil {
			return 0, false, fmt.Errorf("pfc controller: settle: %w", err)
		}
		if time.Duration(monoNs()-t0) <= settleQuick {
			quick++
		} else {
			quick = 0
		}
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("pfc controller: settle: %w", ctx.Err())
		case <-time.After(settleEvery):
		}
	}
	return monoNs() - start, true, nil
}
