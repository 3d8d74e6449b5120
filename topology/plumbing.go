package topology

import "fmt"

// PlumbingNote labels a plan without propagation delay: on it every RTT
// is CPU time, so a run's fidelity verdict is degraded and its numbers
// are not results. ok is false for a plan with delays. Shipped files of
// this kind say `purpose: plumbing`; `cclab run` prints the note and the
// analysis lists it among its warnings.
func (p *Plan) PlumbingNote() (note string, ok bool) {
	if p.HasDelay() {
		return "", false
	}
	marked := ""
	if p.Purpose == PurposePlumbing {
		marked = ", purpose: plumbing"
	}
	return fmt.Sprintf("topology %s has no propagation delay (for plumbing tests%s): every RTT is CPU time, so runs on it are judged degraded and their numbers are not results; for results use a topology with the scaling rule's delays (docs/scaling.md)", p.Name, marked), true
}
