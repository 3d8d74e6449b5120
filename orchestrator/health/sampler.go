package health

import (
	"slices"
	"sort"
	"sync"
	"time"

	"cclab/internal/cpustat"
)

// Report is the emulation health of a run.
type Report struct {
	RTT *RTT `json:"rtt_noise_floor,omitempty"`
	CPU CPU  `json:"cpu"`
	// Softnet is what the CPUs' packet backlogs lost or cut short.
	Softnet Softnet `json:"softnet"`
	// Drops are the interfaces that dropped packets outside any qdisc
	// (a full veth peer backlog, for one): loss no configured buffer
	// explains.
	Drops []IfaceDrops `json:"iface_drops,omitempty"`
	Links []LinkRate   `json:"loaded_links"` // egresses that reached half their rate in some window
	// LoadedThreshold is the share of its configured rate at which a link
	// counts as loaded.
	LoadedThreshold float64  `json:"loaded_threshold"`
	Interval        int64    `json:"sample_interval_ns"`
	Errors          []string `json:"errors,omitempty"`
}

// A Sampler samples CPU and link counters at a fixed interval until Stop.
type Sampler struct {
	opt      SamplerOptions
	ends     []*LinkEnd
	softnet0 Softnet
	drops0   map[string]uint64
	stop     chan struct{}
	wg       sync.WaitGroup

	// written by the sampling goroutine, read after Stop
	cpu        CPU
	softnet    Softnet
	backlogs   []uint64
	pktFirst   cpustat.Times
	busySum    float64
	first, cur cpustat.Times
	peak       map[*LinkEnd]uint64
	peakRatio  map[*LinkEnd]float64 // busiest window over the rate in force then
	startTx    map[*LinkEnd]uint64
	began      time.Time
	ended      time.Time
	errs       []string
}

// SamplerOptions configure a Sampler.
type SamplerOptions struct {
	// Interval between samples (100 ms is a good window: long enough for
	// the counters to move, short enough to see a burst).
	Interval time.Duration
	// Namespaces whose interfaces' drop counters are compared at Stop.
	Namespaces []string
	// PacketCPUs are the CPUs that process packets (nil: all); a window
	// counts as saturated when they spent at least 90 % of it in softirq,
	// or a softirq run was cut short (CPU.SaturatedShare).
	PacketCPUs []int
	// UserCPUs are the CPUs the runner's threads are confined to (nil:
	// none); a window counts when they were at least 95 % busy
	// (CPU.UserSaturatedShare).
	UserCPUs []int
	// RateInForce, when set, is the highest rate an egress was set to
	// since the previous call for it (a run whose events change links):
	// each window is held against it, not the configured rate. Nil: the
	// configured rate throughout.
	RateInForce func(node, iface string) uint64
}

// StartSampler samples links and CPUs until Stop.
func StartSampler(ends []LinkEnd, opt SamplerOptions) *Sampler {
	s := &Sampler{opt: opt, stop: make(chan struct{}), peak: map[*LinkEnd]uint64{}, peakRatio: map[*LinkEnd]float64{}, startTx: map[*LinkEnd]uint64{}}
	s.softnet0, _ = readSoftnet()
	s.drops0, _ = ifaceDrops(opt.Namespaces)
	for i := range ends {
		s.ends = append(s.ends, &ends[i])
	}
	s.wg.Add(1)
	go s.loop()
	return s
}

func (s *Sampler) byNetns() map[string][]*LinkEnd {
	m := map[string][]*LinkEnd{}
	for _, e := range s.ends {
		m[e.Netns] = append(m[e.Netns], e)
	}
	return m
}

// sampleLinks reads every namespace's counters; each end's rate uses the
// time of its own read, since reading many namespaces takes a while on a
// busy machine.
func (s *Sampler) sampleLinks(groups map[string][]*LinkEnd) {
	for ns, ends := range groups {
		tx, at, err := devCounters(ns)
		if err != nil {
			if len(s.errs) < 10 {
				s.errs = append(s.errs, err.Error())
			}
			continue
		}
		for _, e := range ends {
			c, ok := tx[e.Iface]
			if !ok {
				continue
			}
			v := c.txBytes
			if !e.sawCounter {
				s.startTx[e] = v
			} else if dt := at.at.Sub(e.lastAt); dt >= s.opt.Interval*8/10 && v >= e.lastTx &&
				at.uncertainty+e.lastUncertainty <= dt/50 {
				// Shorter windows are a late previous read, not a
				// faster link; a read that took long (the thread
				// preempted) leaves the window's length unknown. Either
				// would overstate the rate.
				bps := uint64(float64(v-e.lastTx) * 8 / dt.Seconds())
				s.peak[e] = max(s.peak[e], bps)
				if rate := s.rateInForce(e); rate > 0 {
					s.peakRatio[e] = max(s.peakRatio[e], float64(bps)/float64(rate))
				}
			}
			e.lastTx, e.lastAt, e.lastUncertainty, e.sawCounter = v, at.at, at.uncertainty, true
		}
	}
}

// rateInForce is the rate e's window is held against.
func (s *Sampler) rateInForce(e *LinkEnd) uint64 {
	if s.opt.RateInForce != nil {
		if r := s.opt.RateInForce(e.Node, e.Iface); r > 0 {
			return r
		}
	}
	return e.ConfigBps
}

func (s *Sampler) loop() {
	defer s.wg.Done()
	groups := s.byNetns()
	all, per, _ := cpustat.Read()
	s.first, s.cur = all, all
	s.pktFirst = s.packetCPUs(per)
	s.softnet, _ = readSoftnet()
	s.cpu.CPUs = len(per)
	s.began = time.Now()
	s.sampleLinks(groups)
	t := time.NewTicker(s.opt.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			s.ended = time.Now()
			s.sampleLinks(groups)
			if a, p, err := cpustat.Read(); err == nil {
				s.cpu.MeanBusy = cpustat.BusyShare(s.first, a)
				s.cpu.Softirq = cpustat.SoftirqShare(s.first, a)
				s.cpu.Stolen = cpustat.StealShare(s.first, a)
				s.cpu.PacketSoftirq = cpustat.SoftirqShare(s.pktFirst, s.packetCPUs(p))
			}
			return
		case <-t.C:
			a, p, err := cpustat.Read()
			if err == nil {
				f := cpustat.BusyShare(s.cur, a)
				s.cpu.MaxBusy = max(s.cpu.MaxBusy, f)
				s.cpu.MaxSoftirq = max(s.cpu.MaxSoftirq, cpustat.SoftirqShare(s.cur, a))
				busy, soft := s.packetShares(per, p)
				if s.opt.UserCPUs != nil && cpustat.BusyShare(pick(per, s.opt.UserCPUs), pick(p, s.opt.UserCPUs)) >= 0.95 {
					s.cpu.UserSaturatedShare++
				}
				sn, _ := readSoftnet()
				if busy >= 0.95 {
					s.cpu.BusyShare++
				}
				if soft >= 0.9 || sn.TimeSqueeze > s.softnet.TimeSqueeze {
					s.cpu.SaturatedShare++
				}
				s.cpu.MaxPacketSoftirq = max(s.cpu.MaxPacketSoftirq, soft)
				s.softnet = sn
				s.backlogs = append(s.backlogs, sn.backlog)
				for i := range min(len(p), len(per)) {
					s.cpu.MaxOneCPU = max(s.cpu.MaxOneCPU, cpustat.BusyShare(per[i], p[i]))
					s.cpu.MaxStolenOneCPU = max(s.cpu.MaxStolenOneCPU, cpustat.StealShare(per[i], p[i]))
				}
				s.cpu.Windows++
				s.cur, per = a, p
			}
			s.sampleLinks(groups)
		}
	}
}

// pick sums the listed CPUs of a per-CPU reading.
func pick(per []cpustat.Times, cpus []int) cpustat.Times {
	var t cpustat.Times
	for _, c := range cpus {
		if c >= 0 && c < len(per) {
			t = t.Add(per[c])
		}
	}
	return t
}

// packetCPUs sums the packet CPUs of a per-CPU reading.
func (s *Sampler) packetCPUs(per []cpustat.Times) cpustat.Times {
	var t cpustat.Times
	for i, c := range per {
		if s.opt.PacketCPUs != nil && !slices.Contains(s.opt.PacketCPUs, i) {
			continue
		}
		t = t.Add(c)
	}
	return t
}

// packetShares are the packet CPUs' busy and softirq shares between two
// per-CPU readings.
func (s *Sampler) packetShares(a, b []cpustat.Times) (busy, soft float64) {
	pa, pb := s.packetCPUs(a), s.packetCPUs(b)
	return cpustat.BusyShare(pa, pb), cpustat.SoftirqShare(pa, pb)
}

// Stop ends sampling and reports; links count as loaded when some window
// reached half their configured rate.
func (s *Sampler) Stop() Report {
	close(s.stop)
	s.wg.Wait()
	r := Report{CPU: s.cpu, LoadedThreshold: 0.5, Interval: int64(s.opt.Interval), Errors: s.errs}
	r.CPU.PacketCPUs = s.opt.PacketCPUs
	r.CPU.UserCPUs = s.opt.UserCPUs
	if sn, err := readSoftnet(); err == nil {
		r.Softnet = sn.sub(s.softnet0)
	} else {
		r.Errors = append(r.Errors, err.Error())
	}
	if d1, err := ifaceDrops(s.opt.Namespaces); err == nil {
		r.Drops = dropsSince(s.drops0, d1)
	} else {
		r.Errors = append(r.Errors, err.Error())
	}
	if r.CPU.Windows > 0 {
		r.CPU.SaturatedShare /= float64(r.CPU.Windows)
		r.CPU.BusyShare /= float64(r.CPU.Windows)
		r.CPU.UserSaturatedShare /= float64(r.CPU.Windows)
	}
	if len(s.backlogs) > 0 {
		slices.Sort(s.backlogs)
		r.CPU.BacklogMedian, r.CPU.BacklogMax = s.backlogs[len(s.backlogs)/2], s.backlogs[len(s.backlogs)-1]
	}
	secs := s.ended.Sub(s.began).Seconds()
	for _, e := range s.ends {
		peak := s.peak[e]
		if e.ConfigBps == 0 || float64(peak) < r.LoadedThreshold*float64(e.ConfigBps) {
			continue
		}
		tx := e.lastTx - s.startTx[e]
		r.Links = append(r.Links, LinkRate{
			Node: e.Node, Iface: e.Iface, ConfigBps: e.ConfigBps, PeakBps: peak,
			MeanBps: uint64(float64(tx) * 8 / secs), TxBytes: tx,
			Ratio: s.peakRatio[e],
		})
	}
	sort.Slice(r.Links, func(i, j int) bool {
		if r.Links[i].Node != r.Links[j].Node {
			return r.Links[i].Node < r.Links[j].Node
		}
		return r.Links[i].Iface < r.Links[j].Iface
	})
	return r
}
