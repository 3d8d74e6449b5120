package nsexec

import (
	"fmt"
	"os"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// WithSysfs runs fn with a sysfs mounted at root that shows the devices of
// the namespace named name (sysfs shows the namespace of the thread that
// mounts it, as `ip netns exec` arranges). The mount is made in a private
// mount namespace of a thread of its own, which the runtime discards
// afterwards: nothing is mounted anywhere else, even for a moment.
func WithSysfs(name string, fn func(root string) error) error {
	errc := make(chan error, 1)
	go func() {
		// Never unlocked: the thread's mount and network namespaces are
		// no longer the process's, so it must die with this goroutine.
		runtime.LockOSThread()
		errc <- func() error {
			if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
				return fmt.Errorf("sysfs of %s: unshare mounts: %w", name, err)
			}
			if err := unix.Mount("", "/", "", unix.MS_SLAVE|unix.MS_REC, ""); err != nil {
				return fmt.Errorf("sysfs of %s: private mounts: %w", name, err)
			}
			target, err := netns.GetFromName(name)
			if err != nil {
				return fmt.Errorf("open netns %s: %w", name, err)
			}
			defer target.Close()
			if err := netns.Set(target); err != nil {
				return fmt.Errorf("enter netns %s: %w", name, err)
			}
			dir, err := os.MkdirTemp("", "cclab-sysfs-")
			if err != nil {
				return fmt.Errorf("sysfs of %s: %w", name, err)
			}
			defer os.Remove(dir)
			if err := unix.Mount("sysfs", dir, "sysfs", 0, ""); err != nil {
				return fmt.Errorf("mount sysfs of %s: %w", name, err)
			}
			defer unix.Unmount(dir, unix.MNT_DETACH)
			return fn(dir)
		}()
	}()
	return <-errc
}
