package watch

import (
	"context"
	"net/netip"
	"sync"

	"cclab/kmod/lawload"
)

// A LawSignal is the newest decision of a cclab law on a flow: what it
// reads (its signal, in the law's units: kmod/law/README.md) and what it
// did.
type LawSignal struct {
	Law        string `json:"law"`
	Signal     uint64 `json:"signal"`
	SignalName string `json:"signal_name"`
	Note       string `json:"note"`
	AtMonoNs   uint64 `json:"at_mono_ns"`
}

type sock struct{ local, remote netip.AddrPort }

// Signals keeps the newest trace record of every flow of cclab's laws
// (the laws' per-ACK trace, kmod/lawload): one record per ACK costs the
// laws a ring-buffer write while it runs.
type Signals struct {
	mu     sync.Mutex
	latest map[sock]LawSignal
	tr     *lawload.Trace
}

// StartSignals switches the laws' trace on; lawload.ErrTraceRunning when a
// run's cc_trace.csv (or another watch) has it.
func StartSignals(ctx context.Context, opts lawload.Options) (*Signals, error) {
	s := &Signals{latest: map[sock]LawSignal{}}
	tr, err := lawload.StartTraceFunc(ctx, opts, func(r *lawload.TraceRecord) error {
		s.mu.Lock()
		s.latest[sock{r.Local, r.Remote}] = LawSignal{Law: r.Law, Signal: r.Signal, SignalName: r.SignalName, Note: r.Note, AtMonoNs: r.TimeNs}
		s.mu.Unlock()
		return nil
	}, nil)
	if err != nil {
		return nil, err
	}
	s.tr = tr
	return s, nil
}

// Of is the newest signal of the flow local -> remote.
func (s *Signals) Of(local, remote string) (LawSignal, bool) {
	l, err1 := netip.ParseAddrPort(local)
	r, err2 := netip.ParseAddrPort(remote)
	if err1 != nil || err2 != nil {
		return LawSignal{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.latest[sock{l, r}]
	return v, ok
}

// Stop switches the trace off.
func (s *Signals) Stop() error {
	_, err := s.tr.Stop()
	return err
}
