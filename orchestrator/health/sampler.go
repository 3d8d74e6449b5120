package health

import (
	"sort"
	"sync"
	"time"
)

// Report is the emulation health of a run.
type Report struct {
	RTT   *RTT       `json:"rtt_noise_floor,omitempty"`
	CPU   CPU        `json:"cpu"`
	Links []LinkRate `json:"loaded_links"` // egresses that reached half their rate in some window
	// LoadedThreshold is the share of its configured rate at which a link
	// counts as loaded.
	LoadedThreshold float64  `json:"loaded_threshold"`
	Interval        int64    `json:"sample_interval_ns"`
	Errors          []string `json:"errors,omitempty"`
}

// A Sampler samples CPU and link counters at a fixed interval until Stop.
type Sampler struct {
	interval time.Duration
	ends     []*LinkEnd
	stop     chan struct{}
	wg       sync.WaitGroup

	// written by the sampling goroutine, read after Stop
	cpu        CPU
	busySum    float64
	first, cur cpuTimes
	peak       map[*LinkEnd]uint64
	startTx    map[*LinkEnd]uint64
	began      time.Time
	ended      time.Time
	errs       []string
}

// StartSampler samples every interval (100 ms is a good window: long
// enough for the counters to move, short enough to see a burst).
func StartSampler(ends []LinkEnd, interval time.Duration) *Sampler {
	s := &Sampler{interval: interval, stop: make(chan struct{}), peak: map[*LinkEnd]uint64{}, startTx: map[*LinkEnd]uint64{}}
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
		tx, err := txBytes(ns)
		at := time.Now()
		if err != nil {
			if len(s.errs) < 10 {
				s.errs = append(s.errs, err.Error())
			}
			continue
		}
		for _, e := range ends {
			v, ok := tx[e.Iface]
			if !ok {
				continue
			}
			if !e.sawCounter {
				s.startTx[e] = v
			} else if dt := at.Sub(e.lastAt); dt >= s.interval/2 && v >= e.lastTx {
				bps := uint64(float64(v-e.lastTx) * 8 / dt.Seconds())
				s.peak[e] = max(s.peak[e], bps)
			}
			e.lastTx, e.lastAt, e.sawCounter = v, at, true
		}
	}
}

func (s *Sampler) loop() {
	defer s.wg.Done()
	groups := s.byNetns()
	all, per, _ := readCPU()
	s.first, s.cur = all, all
	s.cpu.CPUs = len(per)
	s.began = time.Now()
	s.sampleLinks(groups)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			s.ended = time.Now()
			s.sampleLinks(groups)
			if a, _, err := readCPU(); err == nil {
				s.cpu.MeanBusy = frac(s.first, a)
			}
			return
		case <-t.C:
			a, p, err := readCPU()
			if err == nil {
				f := frac(s.cur, a)
				s.cpu.MaxBusy = max(s.cpu.MaxBusy, f)
				if f >= 0.95 {
					s.cpu.SaturatedShare++
				}
				for i := range min(len(p), len(per)) {
					s.cpu.MaxOneCPU = max(s.cpu.MaxOneCPU, frac(per[i], p[i]))
				}
				s.cpu.Windows++
				s.cur, per = a, p
			}
			s.sampleLinks(groups)
		}
	}
}

// Stop ends sampling and reports; links count as loaded when some window
// reached half their configured rate.
func (s *Sampler) Stop() Report {
	close(s.stop)
	s.wg.Wait()
	r := Report{CPU: s.cpu, LoadedThreshold: 0.5, Interval: int64(s.interval), Errors: s.errs}
	if r.CPU.Windows > 0 {
		r.CPU.SaturatedShare /= float64(r.CPU.Windows)
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
			Ratio: float64(peak) / float64(e.ConfigBps),
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
