//go:build !cgo

package line

import (
	"errors"
	"time"
)

// Without cgo (a static build, such as the VM guest's test binary) there
// is no line: Start says so, and the caller uses netem or no delay.

// A Line is a running delay line; without cgo there is none.
type Line struct{}

// Start refuses: the line is C, built only with cgo.
func Start(cfg Config) (*Line, error) {
	return nil, errors.New("delay line: this binary was built without cgo; use the netem engine")
}

// Stats is empty: no line ran.
func (l *Line) Stats() Stats { return Stats{} }

// Update refuses: no line runs.
func (l *Line) Update(ports []PortUpdate) error {
	return errors.New("delay line: this binary was built without cgo")
}

// SetTolerance does nothing: no line runs.
func (l *Line) SetTolerance(d time.Duration) {}

// Stop does nothing: no line ran.
func (l *Line) Stop() Stats { return Stats{} }
