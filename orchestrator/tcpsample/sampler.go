package tcpsample

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"cclab/internal/nsexec"
	"cclab/orchestrator/flows"

	"golang.org/x/sys/unix"
)

// Host is one namespace to sample.
type Host struct {
	Name  string // what a Flow calls it (a topology's node name)
	Netns string // its network namespace, as `ip netns` names it (/run/netns/NAME)
}

// Sampler samples a fixed set of hosts again and again, with one open
// sock_diag socket per host. It is not safe for concurrent use.
type Sampler struct {
	hosts   []*hostSampler
	lastLen int // flows in the last sample: the next one's first guess
}

// hostSampler is one host's socket and the namespace it was made in.
type hostSampler struct {
	Host
	path string // netnsPath(Netns)
	diag *diagSocket
	ns   nsID
}

// nsID identifies a namespace: its nsfs device and inode.
type nsID struct{ dev, ino uint64 }

// netnsPath is where `ip netns` (and the netns package) keep a name.
func netnsPath(name string) string { return "/run/netns/" + name }

// Open opens a socket in each host's namespace; on an error nothing stays
// open.
func Open(hosts []Host) (*Sampler, error) {
	if err := checkHosts(hosts); err != nil {
		return nil, err
	}
	s := &Sampler{}
	for _, h := range hosts {
		hs, err := openHost(h)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.hosts = append(s.hosts, hs)
	}
	return s, nil
}

func checkHosts(hosts []Host) error {
	names, nets := map[string]bool{}, map[string]bool{}
	for i, h := range hosts {
		switch {
		case h.Name == "":
			return fmt.Errorf("sample host %d (netns %q): no name", i, h.Netns)
		case h.Netns == "" || h.Netns == "." || h.Netns == ".." || strings.Contains(h.Netns, "/"):
			return fmt.Errorf("sample host %s: netns %q is not a namespace name", h.Name, h.Netns)
		case names[h.Name]:
			return fmt.Errorf("sample host %s: listed twice", h.Name)
		case nets[h.Netns]:
			return fmt.Errorf("sample host %s: netns %s already belongs to another host", h.Name, h.Netns)
		}
		names[h.Name], nets[h.Netns] = true, true
	}
	return nil
}

func openHost(h Host) (*hostSampler, error) {
	hs := &hostSampler{Host: h, path: netnsPath(h.Netns)}
	err := nsexec.Do(h.Netns, func() error {
		var err error
		if hs.diag, err = newDiagSocket(); err != nil {
			return err
		}
		// The namespace this thread, and so the socket, is in.
		hs.ns, err = statNetns("/proc/thread-self/ns/net")
		return err
	})
	if err != nil {
		if hs.diag != nil {
			hs.diag.close()
		}
		return nil, fmt.Errorf("sample host %s: %w", h.Name, err)
	}
	return hs, nil
}

func statNetns(path string) (nsID, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return nsID{}, fmt.Errorf("stat %s: %w", path, err)
	}
	return nsID{dev: st.Dev, ino: st.Ino}, nil
}

// Sample reads every host's sockets in a sampled state (ESTABLISHED and
// the closing states that still move data), host after host in the order
// given to Open, each host's in the kernel's order. An error names the host
// and namespace; a namespace that is gone, or whose name now leads to
// another namespace, is one.
func (s *Sampler) Sample(ctx context.Context) ([]Flow, error) {
	out := make([]Flow, 0, s.lastLen)
	for _, h := range s.hosts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("sample host %s: %w", h.Name, err)
		}
		var err error
		if out, err = h.sample(out); err != nil {
			return nil, fmt.Errorf("sample host %s (netns %s): %w", h.Name, h.Netns, err)
		}
	}
	s.lastLen = len(out)
	return out, nil
}

func (h *hostSampler) sample(out []Flow) ([]Flow, error) {
	if h.diag.fd < 0 {
		return out, errors.New("sampler closed")
	}
	now, err := statNetns(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return out, fmt.Errorf("namespace gone: %w", err)
	}
	if err != nil {
		return out, err
	}
	if now != h.ns {
		return out, errors.New("namespace replaced by another of the same name since the sampler opened it")
	}
	first := len(out)
	mono, wall := flows.Monotonic(), time.Now()
	if out, err = h.diag.dump(out); err != nil {
		return out, err
	}
	for i := first; i < len(out); i++ {
		out[i].Host, out[i].Mono, out[i].Wall = h.Name, mono, wall
	}
	return out, nil
}

// Close closes every host's socket, letting go of the namespaces.
func (s *Sampler) Close() error {
	var errs []error
	for _, h := range s.hosts {
		if err := h.diag.close(); err != nil {
			errs = append(errs, fmt.Errorf("close sampler of host %s: %w", h.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Sample samples hosts once: Open, Sample, Close. A Sampler kept open is
// cheaper for repeated samples.
func Sample(ctx context.Context, hosts []Host) ([]Flow, error) {
	s, err := Open(hosts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Sample(ctx)
}
