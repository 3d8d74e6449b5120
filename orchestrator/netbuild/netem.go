package netbuild

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

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
