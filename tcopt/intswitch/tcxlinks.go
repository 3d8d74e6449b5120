package intswitch

import (
	"errors"
	"fmt"
	"sync"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"

	"cclab/internal/nsexec"
)

// tcxParallel is how many tcx links are attached or detached at once.
// Every attach and detach commits the device's program list and then
// waits for an RCU grace period (bpf_mprog_commit), 10-20 ms on this
// machine whatever the CPU does meanwhile; done one at a time, a
// fat-tree's 96 hooks took 2 s to attach and 2 s to detach. Concurrent
// commits share grace periods.
const tcxParallel = 16

// A tcxHook is one program to attach to one interface.
type tcxHook struct {
	i    iface
	prog *ebpf.Program
	at   ebpf.AttachType
}

// attachTCX attaches every hook as a tcx link at the tail of its
// interface's list, tcxParallel at a time, each from inside its
// interface's namespace (an ifindex means something only there). On
// error it detaches what it attached and returns nothing.
func attachTCX(hooks []tcxHook) ([]link.Link, error) {
	links := make([]link.Link, len(hooks))
	errs := make([]error, len(hooks))
	var wg sync.WaitGroup
	sem := make(chan struct{}, tcxParallel)
	for k, h := range hooks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[k] = nsexec.Do(h.i.netns, func() error {
				l, err := link.AttachTCX(link.TCXOptions{
					Interface: h.i.ifindex, Program: h.prog, Attach: h.at, Anchor: link.Tail(),
				})
				if err != nil {
					return fmt.Errorf("attach %s to %s in %s: %w", h.prog, h.i.name, h.i.netns, err)
				}
				links[k] = l
				return nil
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		var made []link.Link
		for _, l := range links {
			if l != nil {
				made = append(made, l)
			}
		}
		return nil, errors.Join(err, closeLinks(made))
	}
	return links, nil
}

// closeLinks detaches links, tcxParallel at a time.
func closeLinks(links []link.Link) error {
	errs := make([]error, len(links))
	var wg sync.WaitGroup
	sem := make(chan struct{}, tcxParallel)
	for k, l := range links {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := l.Close(); err != nil {
				errs[k] = fmt.Errorf("detach: %w", err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
