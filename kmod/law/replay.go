package law

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
)

// DefaultMSS is the replay's segment size when the trace gives none.
const DefaultMSS = 1448

// Step is the law's output after one trace row (Line 0: initialisation).
type Step struct {
	Line   int    `json:"line"`
	TimeNs uint64 `json:"time_ns"`
	SndUna uint32 `json:"snd_una"`
	SndNxt uint32 `json:"snd_nxt"`
	Out
}

// Result is a whole replay: the law, its parameters and the steps.
type Result struct {
	Law    string  `json:"law"`
	MSS    uint32  `json:"mss"`
	Params []Param `json:"params"`
	Steps  []Step  `json:"steps"`
}

// Stepper is one build of a law run step by step: the user-space core
// (Controller, through cgo) or another build such as the BPF one.
type Stepper interface {
	Init(sndNxt, mss uint32) (Out, error)
	OnAck(a Ack) (Out, error)
}

// cgoStepper runs the user-space build.
type cgoStepper struct {
	p   *Params
	ctl *Controller
}

func (c *cgoStepper) Init(sndNxt, mss uint32) (Out, error) {
	ctl, out, err := NewController(c.p, sndNxt, mss)
	c.ctl = ctl
	return out, err
}

func (c *cgoStepper) OnAck(a Ack) (Out, error) { return c.ctl.OnAck(a) }

// Replay runs the law over the events as one connection. Sequence numbers
// the trace leaves out are synthesised: snd_una advances by the acked
// bytes and the sender keeps its window full (snd_nxt = snd_una + cwnd).
func Replay(ctx context.Context, p *Params, events []Event, mss uint32) (*Result, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	return ReplayWith(ctx, &cgoStepper{p: p}, p, events, mss)
}

// ReplayWith is Replay on a given build of the law; p is only reported.
func ReplayWith(ctx context.Context, st Stepper, p *Params, events []Event, mss uint32) (*Result, error) {
	if mss == 0 {
		mss = DefaultMSS
	}
	var sndUna uint32
	out, err := st.Init(0, mss)
	if err != nil {
		return nil, err
	}
	sndNxt := uint32(out.CwndBytes)
	res := &Result{Law: p.Law().String(), MSS: mss, Params: p.List()}
	res.Steps = append(res.Steps, Step{SndUna: sndUna, SndNxt: sndNxt, Out: out})
	var echoCount, qcnCount uint32
	var qcnFb uint8
	for i, ev := range events {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("replay: %w", err)
			}
		}
		if ev.SndUna != nil {
			sndUna = *ev.SndUna
		} else {
			sndUna += ev.Acked
		}
		if ev.SndNxt != nil {
			sndNxt = *ev.SndNxt
		} else if full := sndUna + uint32(out.CwndBytes); int32(full-sndNxt) > 0 {
			sndNxt = full
		}
		segMSS := mss
		if ev.MSS != 0 {
			segMSS = ev.MSS
		}
		ack := Ack{
			NowNs: ev.TimeNs, AckedBytes: ev.Acked, ECEBytes: ev.ECEBytes, ECE: ev.ECE, NotCwndLimited: ev.NotCwndLimited, UE: ev.UE,
			CwndSegs: out.CwndSegs, MSS: segMSS, SndNxt: sndNxt, SndUna: sndUna, RTTus: ev.RTTus,
		}
		// The socket's echo keeps the newest QCN record until another comes.
		if ev.QCNCount != nil {
			qcnCount = *ev.QCNCount
		} else if ev.QCNFb != 0 {
			qcnCount++
		}
		if ev.QCNFb != 0 {
			qcnFb = ev.QCNFb
		}
		if ev.hasEcho() {
			echoCount++
			e := &Echo{ArrivedNs: ev.TimeNs - ev.EchoAgeNs, Count: echoCount, QCNCount: qcnCount, QCNFb: qcnFb}
			if ev.EchoSeq != nil {
				e.Count = *ev.EchoSeq
			}
			for _, h := range ev.Hops {
				e.Hops = append(e.Hops, Hop{
					Qlen:     uint32(h.Qlen),
					TxBytes:  uint32(h.TxBytes % TxWrap),
					Ts:       uint32(h.TsNs % TsWrap),
					RateMbps: h.RateMbps,
				})
			}
			ack.Echo = e
		}
		out, err = st.OnAck(ack)
		if err != nil {
			return nil, fmt.Errorf("trace line %d: %w", ev.Line, err)
		}
		res.Steps = append(res.Steps, Step{Line: ev.Line, TimeNs: ev.TimeNs, SndUna: sndUna, SndNxt: sndNxt, Out: out})
	}
	return res, nil
}

// WriteCSV prints the steps as CSV (header first).
func (r *Result) WriteCSV(w io.Writer) error {
	if _, err := fmt.Fprintln(w, "line,time_ns,snd_una,snd_nxt,cwnd_bytes,cwnd_segs,pacing_Bps,signal_ppm,trace"); err != nil {
		return fmt.Errorf("write replay csv: %w", err)
	}
	for _, s := range r.Steps {
		if _, err := fmt.Fprintf(w, "%d,%d,%d,%d,%d,%d,%d,%d,%s\n", s.Line, s.TimeNs, s.SndUna, s.SndNxt,
			s.CwndBytes, s.CwndSegs, s.PacingRate, s.SignalPPM, s.Trace); err != nil {
			return fmt.Errorf("write replay csv: %w", err)
		}
	}
	return nil
}

// WriteJSON prints the whole result as one JSON document.
func (r *Result) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write replay json: %w", err)
	}
	return nil
}
