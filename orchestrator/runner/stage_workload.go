package runner

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"time"

	"cclab/internal/cpustat"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/health"
	"cclab/orchestrator/netbuild"
)

// workloadStage runs the flows, with the health sampler and the CPU queue
// probe watching them. The workload's own error does not stop the run:
// what it did is still collected and recorded (variantRun.runErr).
type workloadStage struct{ *variantRun }

func (workloadStage) Name() string { return "workload" }

func (r workloadStage) Start(ctx context.Context) error {
	p, v := r.p, r.v
	// Health covers the workload only, not the CPU that loading the
	// extensions' BPF programs took.
	if r.cpuProbe != nil {
		r.cpuProbe.Start()
	}
	userCPUs := r.userCPUs()
	sopt := health.SamplerOptions{Interval: 100 * time.Millisecond, Namespaces: r.net.Namespaces(),
		PacketCPUs: r.dl.PacketCPUs(), UserCPUs: userCPUs}
	if r.events != nil {
		// A link the events changed carries what its rate then allows.
		sopt.RateInForce = r.events.app.PeakRate
	}
	r.sampler = health.StartSampler(linkEnds(p.Plan, r.net), sopt)

	if cpus := userCPUs; cpus != nil {
		pin, err := cpustat.PinThreads(cpus)
		if err != nil {
			return fmt.Errorf("move the run's threads to CPU %v: %w", cpus, err)
		}
		r.rj.UserCPUs = cpus
		defer func() {
			if err := pin.Undo(); err != nil {
				fmt.Fprintf(r.opt.Log, "[%s] %v\n", v.CC, err)
			}
		}()
	}

	specs := make([]flows.Spec, len(v.Flows))
	for i, f := range v.Flows {
		specs[i] = flows.Spec{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, Start: f.Start, Stop: f.Stop, CC: f.CC, Tool: f.Tool}
	}
	var done atomic.Int64
	stopProgress := progress(r.opt.Log, v.CC, len(specs), planEnd(specs), &done)
	r.results, r.runErr = flows.Run(ctx, specs, flows.Options{
		EchoCC: echoCCs(r.regs),
		Hosts:  r.hosts, Port: flowPort, Timeout: p.Exp.Timeout.D(), ZeroNs: r.zero,
		Progress:  func(n, _ int) { done.Store(int64(n)) },
		Iperf3Dir: filepath.Join(r.dir, "iperf3"),
		RecordPID: func(pid int) error { return netbuild.RecordPID(r.opt.ID, pid) },
		Priority:  func(id int) uint32 { return netbuild.NICClass(id, r.rj.Hosts.NICQueues) },
	})
	stopProgress()
	time.Sleep(20 * time.Millisecond) // let the last ACKs and FINs reach the captures
	return nil
}

// userCPUs are the CPUs this process's threads move to for the workload
// (emulation.user_cpu): the delay line's when packet work has one CPU of
// its own, so that the run's user space (the workload's sockets, the
// samplers, the captures) never takes the packet CPU from softirq, or
// from ksoftirqd once softirq overflows there; nil leaves them be. The
// line's thread outranks them (SCHED_FIFO).
func (r workloadStage) userCPUs() []int {
	if r.p.Exp.Emulation.UserCPU == "any" {
		return nil
	}
	lc := r.dl.LineCPU()
	if lc < 0 || len(r.dl.PacketCPUs()) != 1 {
		return nil
	}
	return []int{lc}
}

// Stop stops the sampler if collect did not.
func (r workloadStage) Stop(context.Context) error {
	if r.sampler != nil {
		r.sampler.Stop()
		r.sampler = nil
	}
	return nil
}
