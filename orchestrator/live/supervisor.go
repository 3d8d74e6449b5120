package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"cclab/internal/runid"
	"cclab/kmod/lawload"
	"cclab/orchestrator/delay"
	"cclab/orchestrator/linkchange"
	"cclab/orchestrator/netbuild"
	"cclab/orchestrator/watch"
	"cclab/tcopt/agent"
	"cclab/tcopt/intswitch"
)

// Options configure the supervisor.
type Options struct {
	// INT: the switch stamps INT and the host agent reserves and echoes
	// the option for the processes of the run's cgroup.
	INT bool
	// Marking is the switch ports' ECN marking (zero: none).
	Marking intswitch.Marking
	Log     io.Writer
}

// supervisor is what a live topology's process holds.
type supervisor struct {
	id    runid.ID
	net   *netbuild.Network
	line  *delay.Server
	sw    *intswitch.Switch
	cfgs  []intswitch.PortConfig
	ag    *agent.Agent
	log   io.Writer
	start time.Time

	links *linkchange.Applier
	claim *lawload.ClaimHold
}

// Serve runs the supervisor of run id, built by netbuild.Up in another
// process: it serves the delay line, attaches the INT switch and the host
// agent, calls ready (nil, or why it could not start) and answers the
// control socket until ctx ends; then it detaches everything. The network
// itself stays: tearing it down is `cclab topo down`'s.
func Serve(ctx context.Context, id runid.ID, opt Options, ready func(error)) (err error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	s := &supervisor{id: id, log: opt.Log, start: time.Now()}
	started := false
	defer func() {
		if !started {
			ready(err)
		}
	}()
	if s.net, err = netbuild.Open(id); err != nil {
		return err
	}
	defer s.close()
	// The line's CPU is kept free of the fabric's softirq work, as in a
	// run (delay.Steer).
	if s.line, err = s.net.ServeDelay(ctx, delay.ServeOptions{CPU: -1, Steer: s.net.Namespaces()}); err != nil {
		return fmt.Errorf("serve the delay line: %w", err)
	}
	s.cfgs = intswitch.PortsFromPlan(s.net.Plan, opt.Marking)
	if len(s.cfgs) > 0 {
		if s.sw, err = intswitch.Attach(ctx, intswitch.Config{Netns: s.net.Netns, Ports: s.cfgs}); err != nil {
			return fmt.Errorf("attach the switch: %w", err)
		}
	}
	if opt.INT {
		if s.ag, err = agent.Attach(ctx, id, agent.Options{}); err != nil {
			return fmt.Errorf("attach the INT host agent: %w", err)
		}
	}
	// Interfaces get nil, not a nil pointer, for what is not there.
	var sw linkchange.Switch
	if s.sw != nil {
		sw = s.sw
	}
	var line linkchange.Line
	if s.line != nil {
		line = s.line
	}
	s.links = linkchange.New(s.net, sw, line)
	sock := SocketPath(id)
	os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	defer ln.Close()
	st := State{PID: os.Getpid(), Started: s.start.UTC().Format(time.RFC3339Nano), INT: opt.INT,
		SwitchPorts: len(s.cfgs), Agent: s.ag != nil}
	if s.line != nil {
		st.DelayEngine, st.DelayPorts = string(s.net.DelayEngine), len(s.net.Delay.Ports)
	}
	if s.ag != nil {
		st.Cgroup = s.ag.Cgroup()
	}
	if err := writeState(id, st); err != nil {
		return err
	}
	started = true
	ready(nil)
	fmt.Fprintf(s.log, "%s supervisor of run %s ready: line %s (%d ports), switch %d ports, INT %v\n",
		time.Now().Format(time.RFC3339), id, st.DelayEngine, st.DelayPorts, st.SwitchPorts, st.INT)

	go func() {
		<-ctx.Done()
		ln.Close()
	}()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(s.log, "%s stopping: %v\n", time.Now().Format(time.RFC3339), context.Cause(ctx))
				return nil
			}
			return fmt.Errorf("control socket: %w", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each connection samples the ports on its own: a watcher's
			// utilisation is over its own interval, whoever else watches.
			var ps *watch.PortSampler
			if s.sw != nil {
				ps = watch.NewPortSampler(s.sw)
			}
			serveConn(ctx, c, func(ctx context.Context, req request) response { return s.handle(ctx, req, ps) })
		}()
	}
}

// close detaches what Serve attached, the agent first (it moves processes
// back out of the cgroup), the line last.
func (s *supervisor) close() {
	var errs []error
	if s.links != nil {
		s.links.Close()
	}
	if s.claim != nil {
		errs = append(errs, s.claim.Release())
	}
	if s.ag != nil {
		errs = append(errs, s.ag.Close())
	}
	if s.sw != nil {
		errs = append(errs, s.sw.Close())
	}
	if s.line != nil {
		s.line.Stop()
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(s.log, "detach: %v\n", err)
	}
}

func (s *supervisor) handle(ctx context.Context, req request, ports *watch.PortSampler) response {
	switch req.Op {
	case "status":
		st, err := s.status()
		if err != nil {
			return response{Error: err.Error()}
		}
		return response{Status: st}
	case "ports":
		if ports == nil {
			return response{}
		}
		ps, err := ports.Sample()
		if err != nil {
			return response{Error: err.Error()}
		}
		return response{Ports: ps}
	case "claim":
		if err := s.holdClaim(req.Law); err != nil {
			return response{Error: err.Error()}
		}
		return response{}
	case "link":
		if req.Link == nil {
			return response{Error: "link: no change given"}
		}
		ch, err := s.setLink(ctx, *req.Link)
		if err != nil {
			return response{Error: err.Error()}
		}
		return response{Link: ch}
	}
	return response{Error: fmt.Sprintf("unknown request %q", req.Op)}
}

// holdClaim claims law's registration until the supervisor ends.
func (s *supervisor) holdClaim(law string) error {
	if s.claim != nil {
		return fmt.Errorf("claim: run %s already claims its law", s.id)
	}
	regs, err := lawload.List(lawload.Options{})
	if err != nil {
		return fmt.Errorf("claim %s: %w", law, err)
	}
	for _, r := range regs {
		if r.Name == law {
			if s.claim, err = lawload.HoldClaim(s.id, []lawload.Registration{r}, lawload.Options{}); err != nil {
				return fmt.Errorf("claim %s: %w", law, err)
			}
			return nil
		}
	}
	return fmt.Errorf("claim %s: it is not registered", law)
}
