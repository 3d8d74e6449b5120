//go:build !cgo

package pfc

import (
	"errors"

	"cclab/tcopt/intswitch"
)

// Without cgo (a static build, such as the VM guest's test binary) there
// is no timing thread (ctl.c), and so no lossless run.
type thread struct{}

func startThread(*intswitch.Switch, []Upstream, []*Actuator, Options) (*thread, error) {
	return nil, errors.New("pfc controller: this binary was built without cgo; the controller's thread is C")
}

func (*thread) stop() threadResult { return threadResult{} }
