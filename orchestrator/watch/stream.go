package watch

import (
	"context"
	"fmt"
	"time"

	"cclab/orchestrator/tcpsample"
)

// A Flow is one TCP socket in a sample.
type Flow struct {
	Host   string `json:"host"`
	Local  string `json:"local"`
	Remote string `json:"remote"`
	State  string `json:"state"`
	CC     string `json:"cc"`
	// Sender: the socket has sent more than it received (the data end).
	Sender      bool    `json:"sender"`
	CwndSegs    uint32  `json:"cwnd_segments"`
	CwndBytes   uint64  `json:"cwnd_bytes"`
	SRTTUs      float64 `json:"srtt_us"`
	MinRTTUs    float64 `json:"min_rtt_us"`
	PacingBps   uint64  `json:"pacing_bps,omitempty"` // absent: unlimited
	DeliveryBps uint64  `json:"delivery_bps"`
	AppLimited  bool    `json:"app_limited"`
	BytesAcked  uint64  `json:"bytes_acked"`
	BytesRecv   uint64  `json:"bytes_received"`
	Retrans     uint32  `json:"retransmits"`
	// Law is the newest decision of the cclab law the flow runs, when
	// the watch reads the laws' trace (Options.Signals).
	Law *LawSignal `json:"law,omitempty"`
}

// A Sample is the fabric at one time.
type Sample struct {
	AtUnixNs int64        `json:"at_unix_ns"`
	Flows    []Flow       `json:"flows"`
	Ports    []PortSample `json:"ports,omitempty"`
}

// PortsFunc samples the switch's ports (nil: the fabric has none to
// sample here).
type PortsFunc func(ctx context.Context) ([]PortSample, error)

// Options of Stream.
type Options struct {
	Interval time.Duration // default 100 ms
	Count    int           // samples to take; 0: until ctx ends
	// Signals, when set, gives each flow of cclab's laws its law's
	// newest signal.
	Signals *Signals
}

// Stream samples hosts (and ports) every opt.Interval and hands each
// sample to emit, until ctx ends, Count samples were taken, or emit or a
// sample fails.
func Stream(ctx context.Context, hosts []tcpsample.Host, ports PortsFunc, opt Options, emit func(Sample) error) error {
	if opt.Interval <= 0 {
		opt.Interval = 100 * time.Millisecond
	}
	s, err := tcpsample.Open(hosts)
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer s.Close()
	t := time.NewTicker(opt.Interval)
	defer t.Stop()
	for n := 0; opt.Count == 0 || n < opt.Count; n++ {
		if n > 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-t.C:
			}
		}
		smp, err := take(ctx, s, ports, opt.Signals)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := emit(smp); err != nil {
			return err
		}
	}
	return nil
}

func take(ctx context.Context, s *tcpsample.Sampler, ports PortsFunc, sig *Signals) (Sample, error) {
	out := Sample{AtUnixNs: time.Now().UnixNano()}
	fs, err := s.Sample(ctx)
	if err != nil {
		return out, fmt.Errorf("watch: %w", err)
	}
	out.Flows = make([]Flow, 0, len(fs))
	for _, f := range fs {
		w := flowOf(f)
		if sig != nil && w.Sender {
			if ls, ok := sig.Of(w.Local, w.Remote); ok {
				w.Law = &ls
			}
		}
		out.Flows = append(out.Flows, w)
	}
	if ports != nil {
		if out.Ports, err = ports(ctx); err != nil {
			return out, fmt.Errorf("watch: %w", err)
		}
	}
	return out, nil
}

func flowOf(f tcpsample.Flow) Flow {
	w := Flow{Host: f.Host, Local: f.Local.String(), Remote: f.Remote.String(), State: f.State.String(), CC: f.CC,
		Sender: f.BytesAcked > f.BytesRecv+1, CwndSegs: f.Cwnd, CwndBytes: uint64(f.Cwnd) * uint64(f.MSS),
		SRTTUs: float64(f.SRTT) / 1e3, MinRTTUs: float64(f.MinRTT) / 1e3, DeliveryBps: f.DeliveryRate,
		AppLimited: f.AppLimited, BytesAcked: f.BytesAcked, BytesRecv: f.BytesRecv, Retrans: f.TotalRetrans}
	if f.PacingRate != tcpsample.Unlimited {
		w.PacingBps = f.PacingRate
	}
	return w
}
