package intswitch

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
)

// An iface is an interface as the BPF programs see it: its namespace's
// cookie and its ifindex there.
type iface struct {
	netns   string
	name    string
	ifindex int
	cookie  uint64
}

// lookupIface resolves an interface inside a namespace. Call it with the
// thread already in that namespace.
func lookupIface(netns, name string) (iface, error) {
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		return iface{}, fmt.Errorf("interface %s in %s: %w", name, netns, err)
	}
	cookie, err := currentNetnsCookie()
	if err != nil {
		return iface{}, fmt.Errorf("netns cookie of %s: %w", netns, err)
	}
	return iface{netns: netns, name: name, ifindex: ifc.Index, cookie: cookie}, nil
}

// currentNetnsCookie is the cookie of the calling thread's network
// namespace, which bpf_get_netns_cookie returns for its packets.
func currentNetnsCookie() (uint64, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	v, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_NETNS_COOKIE)
	if err != nil {
		return 0, fmt.Errorf("SO_NETNS_COOKIE: %w", err)
	}
	return v, nil
}

// resolve looks up name inside the namespace netns.
func resolve(netns, name string) (iface, error) {
	var ifc iface
	err := nsexec.Do(netns, func() error {
		var err error
		ifc, err = lookupIface(netns, name)
		return err
	})
	return ifc, err
}
