package delay

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// An Engine is what holds packets for their delay.
type Engine string

// The engines. Both sit at the same place (Placement) behind the same tc
// programs, so a topology has the same delays under either.
const (
	// EngineAuto picks netem where the kernel has it, else the line.
	EngineAuto Engine = ""
	// EngineNetem: sch_netem on the port's sink, one band per class.
	EngineNetem Engine = "netem"
	// EngineLine: cclab's user-space delay line (package line).
	EngineLine Engine = "line"
)

// ParseEngine reads an engine name as an experiment or a flag gives it.
func ParseEngine(s string) (Engine, error) {
	switch Engine(s) {
	case EngineAuto, "auto":
		return EngineAuto, nil
	case EngineNetem, EngineLine:
		return Engine(s), nil
	}
	return "", fmt.Errorf("delay engine %q: want auto, netem or line", s)
}

// Resolve turns EngineAuto into netem or line for this kernel, and
// refuses netem where the kernel has none.
func (e Engine) Resolve() (Engine, error) {
	switch e {
	case EngineLine:
		return e, nil
	case EngineNetem:
		if err := probeNetem(); err != nil {
			return "", fmt.Errorf("delay engine netem: this kernel has no sch_netem (%v); use the line", err)
		}
		return e, nil
	case EngineAuto:
		if probeNetem() == nil {
			return EngineNetem, nil
		}
		return EngineLine, nil
	}
	return "", fmt.Errorf("delay engine %q: want auto, netem or line", string(e))
}

// HasNetem reports whether the kernel has sch_netem.
func HasNetem() bool { return probeNetem() == nil }

// probeNetem tells whether the kernel has sch_netem by adding a netem qdisc
// to lo in a throw-away anonymous namespace (it dies with the probe's
// thread reference: nothing is left behind, nothing is named).
func probeNetem() error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			runtime.UnlockOSThread()
			return
		}
		defer orig.Close()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare: %w", err)
			runtime.UnlockOSThread()
			return
		}
		errc <- func() error {
			h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
			if err != nil {
				return err
			}
			defer h.Close()
			q := netlink.NewNetem(netlink.QdiscAttrs{LinkIndex: 1, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
				netlink.NetemQdiscAttrs{Latency: 10})
			if err := h.QdiscAdd(q); err != nil {
				return fmt.Errorf("no sch_netem: %w", err)
			}
			return nil
		}()
		// Back to the original namespace; if that fails the thread stays
		// locked and the runtime discards it with this goroutine.
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
	}()
	return <-errc
}
