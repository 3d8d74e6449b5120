package lawload

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

const availablePath = "/proc/sys/net/ipv4/tcp_available_congestion_control"

// Available lists the congestion controls registered in the kernel, as
// sockets may select them (TCP_CONGESTION).
func Available() ([]string, error) {
	b, err := os.ReadFile(availablePath)
	if err != nil {
		return nil, fmt.Errorf("read available congestion controls: %w", err)
	}
	return strings.Fields(string(b)), nil
}

// IsRegistered reports whether a congestion control of that name is
// registered in the kernel, by anyone.
func IsRegistered(name string) (bool, error) {
	names, err := Available()
	if err != nil {
		return false, err
	}
	return slices.Contains(names, name), nil
}
