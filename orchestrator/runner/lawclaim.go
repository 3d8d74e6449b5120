package runner

import (
	"fmt"
	"io"
	"slices"

	"cclab/kmod/lawload"
)

// claim records, until the run ends, the registrations of cclab's laws its
// flows run on, with their parameters (lawload.HoldClaim): another run's
// registration, `cclab cc load` and `cclab cc unload` then refuse to
// change them under it. Once per run.
func (ls *lawState) claim(p *Prepared, opt Options) error {
	if ls.hold != nil {
		return nil
	}
	var used []string
	for _, v := range p.Variants {
		for _, f := range v.Flows {
			if !slices.Contains(used, f.CC) {
				used = append(used, f.CC)
			}
		}
	}
	regs, err := lawload.List(opt.Laws)
	if err != nil {
		return fmt.Errorf("claim laws: %w", err)
	}
	var mine []lawload.Registration
	for _, r := range regs {
		if slices.Contains(used, r.Name) {
			mine = append(mine, r)
		}
	}
	if len(mine) == 0 {
		return nil
	}
	h, err := lawload.HoldClaim(opt.ID, mine, opt.Laws)
	if err != nil {
		return err
	}
	ls.hold = h
	return nil
}

// release drops the claim at the run's end.
func (ls *lawState) release(log io.Writer) {
	if err := ls.hold.Release(); err != nil {
		fmt.Fprintf(log, "release the law claim: %v\n", err)
	}
}
