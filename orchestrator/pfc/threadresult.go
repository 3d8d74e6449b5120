package pfc

import "cclab/tcopt/intswitch"

// threadResult is what the thread did, read after it ended.
type threadResult struct {
	log        []ctlRec
	events     uint64
	logDropped uint64
	earlyNs    int64
	realtime   bool
	err        error
}

// ctlRec is one applied change (struct pfc_ctl_rec).
type ctlRec struct {
	crossing, due, start, done int64
	up                         int
	kind                       intswitch.PFCKind
	hop                        int
	err                        int32
}
