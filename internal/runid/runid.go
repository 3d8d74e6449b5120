// Package runid names what a cclab run creates, so that cleanup can find
// exactly that and nothing else.
//
// Every object carries the run's prefix "cclab-<id>-":
//   - network namespaces: cclab-<id>-<node>   (e.g. cclab-a3f9-h12)
//   - pinned BPF objects: /sys/fs/bpf/cclab-<id>/...
//   - state (pids of processes started, what was built): /run/cclab/<id>/
//   - cgroups: /sys/fs/cgroup/unified/cclab-<id>
//
// Interfaces live inside the run's namespaces and vanish with them, so their
// names need no prefix and stay within the kernel's 15 characters.
package runid

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
)

// Mark starts every name cclab creates.
const Mark = "cclab-"

// StateRoot holds one directory per run with what it built and started.
const StateRoot = "/run/cclab"

// BPFRoot is where pinned BPF objects go, one directory per run.
const BPFRoot = "/sys/fs/bpf"

var valid = regexp.MustCompile(`^[a-z0-9]{1,12}$`)

// ID identifies one run.
type ID string

// New returns a fresh random run id.
func New() ID {
	var b [3]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return ID(hex.EncodeToString(b[:]))
}

// Parse checks a user-given id: lower-case letters and digits, 1-12 long.
func Parse(s string) (ID, error) {
	if !valid.MatchString(s) {
		return "", fmt.Errorf("run id %q: use 1-12 lower-case letters or digits", s)
	}
	return ID(s), nil
}

// Prefix is "cclab-<id>-", the start of every namespace of the run.
func (id ID) Prefix() string { return Mark + string(id) + "-" }

// Netns names the namespace of a node.
func (id ID) Netns(node string) string { return id.Prefix() + node }

// StateDir is the run's state directory.
func (id ID) StateDir() string { return StateRoot + "/" + string(id) }

// BPFDir is the run's bpffs directory.
func (id ID) BPFDir() string { return BPFRoot + "/" + Mark + string(id) }

// FromNetns returns the run id and node of a namespace cclab made, or ok=false
// for any other namespace.
func FromNetns(name string) (id ID, node string, ok bool) {
	rest, found := strings.CutPrefix(name, Mark)
	if !found {
		return "", "", false
	}
	i := strings.IndexByte(rest, '-')
	if i <= 0 || i == len(rest)-1 || !valid.MatchString(rest[:i]) {
		return "", "", false
	}
	return ID(rest[:i]), rest[i+1:], true
}
