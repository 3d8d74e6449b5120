package flows

import (
	"testing"

	"cclab/internal/testnet"
)

// pair is a testnet.Pair as two flow hosts.
func pair(t *testing.T) (a, b Host) {
	ea, eb := testnet.Pair(t)
	return Host{Netns: ea.Netns, Addr: ea.Addr}, Host{Netns: eb.Netns, Addr: eb.Addr}
}
