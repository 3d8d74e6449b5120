package netbuild

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"cclab/topology"
)

// nsNode is one namespace while it is being built: the handles stay open
// only during Up (an open namespace fd would keep it alive after Down).
type nsNode struct {
	node     topology.Node
	ns       string
	fd       netns.NsHandle
	h        *netlink.Handle   // rtnetlink in the namespace
	raw      *nl.NetlinkSocket // for requests the library lacks (bfifo)
	ethtool  int               // AF_INET socket in the namespace, for ethtool ioctls
	ifindex  map[string]int    // interface name -> index, after the links exist
	ports    []topology.EgressPort
	features []string // ethtool feature names by bit
}

func (n *nsNode) close() {
	if n.h != nil {
		n.h.Close()
	}
	if n.raw != nil {
		n.raw.Close()
	}
	if n.ethtool > 0 {
		unix.Close(n.ethtool)
	}
	if n.fd.IsOpen() {
		n.fd.Close()
	}
}

// errTainted marks an error after which the worker's thread could not
// return to its namespace: the worker then ends with the thread still
// locked, and the Go runtime discards the thread.
var errTainted = errors.New("thread left in a foreign namespace")

// parallel runs fn(i) for i in [0,n) on workers goroutines, each locked to
// its own OS thread (fn may switch the thread's namespace, and must switch
// it back). It stops early on the first error or when ctx ends.
func parallel(ctx context.Context, workers, n int, fn func(i int) error) error {
	if workers > n {
		workers = n
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	var once, closeDone sync.Once
	var first error
	fail := func(err error) { once.Do(func() { first = err }) }
	done := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			for i := range jobs {
				if err := fn(i); err != nil {
					fail(err)
					closeDone.Do(func() { close(done) })
					if errors.Is(err, errTainted) {
						return // thread stays locked: discarded
					}
				}
			}
			runtime.UnlockOSThread()
		}()
	}
feed:
	for i := 0; i < n; i++ {
		select {
		case jobs <- i:
		case <-done:
			break feed
		case <-ctx.Done():
			fail(ctx.Err())
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	return first
}

// createNamespace makes node's namespace on the calling (locked) thread,
// configures what belongs to the namespace as a whole (sysctls, lo) from
// inside, opens the handles later phases use, and returns the thread to
// orig.
func createNamespace(n *nsNode, orig netns.NsHandle, sysctls []sysctl) (err error) {
	fd, err := netns.NewNamed(n.ns)
	if err != nil {
		// NewNamed may have switched the thread before failing.
		if serr := netns.Set(orig); serr != nil {
			return fmt.Errorf("create netns %s: %w (and cannot return: %v): %w", n.ns, err, serr, errTainted)
		}
		return fmt.Errorf("create netns %s: %w", n.ns, err)
	}
	n.fd = fd
	defer func() {
		if serr := netns.Set(orig); serr != nil {
			err = fmt.Errorf("return from netns %s: %v: %w", n.ns, serr, errTainted)
		}
	}()
	for _, s := range sysctls {
		if err := s.write(); err != nil {
			return fmt.Errorf("%s: %w", n.node.Name, err)
		}
	}
	if n.h, err = netlink.NewHandle(unix.NETLINK_ROUTE); err != nil {
		return fmt.Errorf("netlink in %s: %w", n.ns, err)
	}
	if n.raw, err = nl.GetNetlinkSocketAt(netns.None(), netns.None(), unix.NETLINK_ROUTE); err != nil {
		return fmt.Errorf("netlink in %s: %w", n.ns, err)
	}
	if n.ethtool, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0); err != nil {
		return fmt.Errorf("socket in %s: %w", n.ns, err)
	}
	lo := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: 1, Name: "lo"}}
	if err := n.h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("lo up in %s: %w", n.ns, err)
	}
	return nil
}
