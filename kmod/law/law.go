// Package law runs the cclab control-law core (the C headers in this
// directory) in user space through cgo: the same code the eBPF struct_ops
// and kernel-module builds compile. It is the engine of `cclab law replay`
// and of the law unit tests. Units and scales: kmod/law/README.md.
package law

/*
#cgo CFLAGS: -O2 -Wall
#include "userspace.h"
*/
import "C"

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unsafe"
)

// Law names one control law of the core: its id in law_table.h.
type Law int

// The laws (enum law_id, law_table.h).
const (
	PowerTCP      Law = C.LAW_ID_POWERTCP
	ThetaPowerTCP Law = C.LAW_ID_THETA_POWERTCP
	HPCC          Law = C.LAW_ID_HPCC
	Swift         Law = C.LAW_ID_SWIFT
	DCTCP         Law = C.LAW_ID_DCTCP
	Timely        Law = C.LAW_ID_TIMELY
	DCQCN         Law = C.LAW_ID_DCQCN
	QCN           Law = C.LAW_ID_QCN
	QCNT          Law = C.LAW_ID_QCN_T
)

// All returns every law of the table, in id order.
func All() []Law {
	out := make([]Law, 0, int(C.LAW_ID_COUNT))
	for id := 1; id <= int(C.LAW_ID_COUNT); id++ {
		out = append(out, Law(id))
	}
	return out
}

// Laws lists the law names ParseLaw accepts, in id order.
func Laws() []string {
	var out []string
	for _, l := range All() {
		out = append(out, l.String())
	}
	return out
}

// ParseLaw returns the law called name: the table's one spelling.
func ParseLaw(name string) (Law, error) {
	for _, l := range All() {
		if l.String() == name {
			return l, nil
		}
	}
	return 0, fmt.Errorf("unknown law %q (known: %s)", name, strings.Join(Laws(), ", "))
}

// ByID returns the law of a trace record's id.
func ByID(id int) (Law, bool) {
	if id < 1 || id > int(C.LAW_ID_COUNT) {
		return 0, false
	}
	return Law(id), true
}

// String is the law's name: its C prefix and congestion-control name.
func (l Law) String() string {
	if n := C.law_name(C.int(l)); n != nil {
		return C.GoString(n)
	}
	return fmt.Sprintf("law(%d)", int(l))
}

// Traits are what the builds and the runs must give a law: the table's
// last column (LAW_T_* in law_table.h).
type Traits int

// The traits (LAW_T_*).
const (
	TraitINT    Traits = C.LAW_T_INT
	TraitECN    Traits = C.LAW_T_ECN
	TraitQCN    Traits = C.LAW_T_QCN
	TraitPriv   Traits = C.LAW_T_PRIV
	TraitHops   Traits = C.LAW_T_HOPS
	TraitModule Traits = C.LAW_T_MODULE
	TraitUE     Traits = C.LAW_T_UE
)

// traitNames name the traits as `cclab law list` and scripts/laws do.
var traitNames = []struct {
	t    Traits
	name string
}{{TraitINT, "int"}, {TraitECN, "ecn"}, {TraitQCN, "qcn"}, {TraitPriv, "priv"}, {TraitHops, "hops"}, {TraitModule, "module"}, {TraitUE, "ue"}}

// Names lists the traits set, by their names.
func (t Traits) Names() []string {
	var out []string
	for _, n := range traitNames {
		if t&n.t != 0 {
			out = append(out, n.name)
		}
	}
	return out
}

// Has reports whether every trait of o is set.
func (t Traits) Has(o Traits) bool { return t&o == o }

// Traits returns the law's row of the traits column.
func (l Law) Traits() Traits {
	if t := C.law_traits(C.int(l)); t >= 0 {
		return Traits(t)
	}
	return 0
}

// StateBytes is the size of the law's per-flow state (struct <law>_state).
func (l Law) StateBytes() int { return int(C.law_state_bytes(C.int(l))) }

// UsesECN reports whether the law reads ECN marks: its builds ask TCP for
// ECN (TCP_CONG_NEEDS_ECN) and its receiver echoes CE exactly
// (LAW_USES_ECN in kmod/bpf, CCLAB_LAW_USES_ECN in kmod).
func (l Law) UsesECN() bool { return l.Traits()&TraitECN != 0 }

// UsesINT reports whether the law's eBPF build reads the INT echo
// (LAW_USES_INT in kmod/bpf): PowerTCP and HPCC its hop records, QCN and
// QCN-T the feedback a switch writes into it. A run stamps INT for these
// (experiment switch.int); the others' packets carry no option, as in the
// papers, where only the INT laws pay its bytes.
func (l Law) UsesINT() bool { return l.Traits()&TraitINT != 0 }

// UsesQCN reports whether the law reacts to QCN feedback: records of a
// congestion point that a switch writes into the INT echo of the flow's
// next ACK and the sender's host agent keeps in the echo (Echo.QCNCount,
// QCNFb).
func (l Law) UsesQCN() bool { return l.Traits()&TraitQCN != 0 }

// HasModule reports whether the law has a kernel-module build
// (kmod/tcp_<law>.c); DCTCP's is the kernel's own.
func (l Law) HasModule() bool { return l.Traits()&TraitModule != 0 }

// Signal says what the law's signal_ppm output carries.
func (l Law) Signal() string {
	if s := C.law_signal(C.int(l)); s != nil {
		return C.GoString(s)
	}
	return ""
}

// Params holds one law's parameter struct (struct <law>_params).
type Params struct {
	law Law
	c   C.union_law_any_params
}

// DefaultParams returns the law's defaults (<law>_params_default).
func DefaultParams(l Law) (*Params, error) {
	p := &Params{law: l}
	if C.law_any_default(C.int(l), &p.c) != 0 {
		return nil, fmt.Errorf("default params: unknown law %d", int(l))
	}
	return p, nil
}

// Law returns the law these parameters belong to.
func (p *Params) Law() Law { return p.law }

// Param is one named parameter value.
type Param struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
}

type paramDesc struct {
	name   string
	size   int
	offset uintptr
	info   ParamInfo
}

// ParamInfo is a parameter's row of law_table.h.
type ParamInfo struct {
	Name    string `json:"name"`
	Unit    string `json:"unit"`
	Default uint64 `json:"default"`
	Min     uint64 `json:"min"`
	Max     uint64 `json:"max"`
	// Related: another parameter narrows [Min, Max] (Desc says how).
	Related bool   `json:"related,omitempty"`
	Desc    string `json:"desc"`
}

func (p *Params) descs() []paramDesc {
	var out []paramDesc
	for i := 0; i < int(C.law_param_count()); i++ {
		d := C.law_param_at(C.int(i))
		if Law(d.law) != p.law {
			continue
		}
		info := ParamInfo{Name: C.GoString(d.name), Unit: C.GoString(d.unit),
			Default: uint64(d.def), Min: uint64(d.lo), Max: uint64(d.hi), Related: d.rel != 0,
			Desc: C.GoString(d.desc)}
		out = append(out, paramDesc{info.Name, int(d.size), uintptr(d.offset), info})
	}
	return out
}

func (p *Params) field(d paramDesc) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(&p.c), d.offset)
}

// List returns every parameter of the law with its value, in table order.
func (p *Params) List() []Param {
	var out []Param
	for _, d := range p.descs() {
		var v uint64
		if d.size == 8 {
			v = *(*uint64)(p.field(d))
		} else {
			v = uint64(*(*uint32)(p.field(d)))
		}
		out = append(out, Param{d.name, v})
	}
	return out
}

// Info returns the table rows of the law's parameters, in table order.
func (p *Params) Info() []ParamInfo {
	var out []ParamInfo
	for _, d := range p.descs() {
		out = append(out, d.info)
	}
	return out
}

// Get returns the value of the named parameter.
func (p *Params) Get(name string) (uint64, bool) {
	for _, q := range p.List() {
		if q.Name == name {
			return q.Value, true
		}
	}
	return 0, false
}

// Set sets the named parameter. It does not range-check: Check does.
func (p *Params) Set(name string, v uint64) error {
	for _, d := range p.descs() {
		if d.name != name {
			continue
		}
		if d.size == 8 {
			*(*uint64)(p.field(d)) = v
			return nil
		}
		if v > 0xffffffff {
			return fmt.Errorf("parameter %s=%d: larger than 32 bits", name, v)
		}
		*(*uint32)(p.field(d)) = uint32(v)
		return nil
	}
	names := make([]string, 0)
	for _, d := range p.descs() {
		names = append(names, d.name)
	}
	sort.Strings(names)
	return fmt.Errorf("%s has no parameter %q (known: %s)", p.law, name, strings.Join(names, ", "))
}

// SetAssignment parses and applies "name=value" (value a decimal integer).
func (p *Params) SetAssignment(kv string) error {
	name, val, ok := strings.Cut(kv, "=")
	if !ok || name == "" {
		return fmt.Errorf("parameter %q: want name=value", kv)
	}
	v, err := strconv.ParseUint(strings.TrimSpace(val), 10, 64)
	if err != nil {
		return fmt.Errorf("parameter %s: value %q is not a non-negative integer", name, val)
	}
	return p.Set(strings.TrimSpace(name), v)
}

// Check runs <law>_params_check: an out-of-range parameter is an error.
func (p *Params) Check() error {
	if rc := C.law_any_check(C.int(p.law), &p.c); rc != C.LAW_OK {
		return fmt.Errorf("%s parameters: %s", p.law, C.GoString(C.law_strerror(rc)))
	}
	return nil
}

// Hop is one switch egress port's record in decoded units (struct int_hop).
type Hop struct {
	Qlen     uint32 `json:"qlen"`      // bytes queued
	TxBytes  uint32 `json:"tx_bytes"`  // bytes sent, mod INT_TX_WRAP
	Ts       uint32 `json:"ts"`        // ns, mod INT_TS_WRAP
	RateMbps uint32 `json:"rate_mbps"` // port rate
}

// MaxHops is INT_MAX_HOPS.
const MaxHops = int(C.INT_MAX_HOPS)

// MaxHopsConst is MaxHops as an untyped constant (for array sizes).
const MaxHopsConst = C.INT_MAX_HOPS

// TxWrap and TsWrap are the wrap periods of Hop.TxBytes (bytes) and Hop.Ts (ns).
const (
	TxWrap = uint64(C.INT_TX_WRAP)
	TsWrap = uint64(C.INT_TS_WRAP)
)

// Echo is the newest INT echo of a socket (struct int_echo).
type Echo struct {
	ArrivedNs uint64
	Count     uint32
	Overflow  bool
	UE        bool  // TCD's U (INT_ECHO_UE)
	Hops      []Hop // at most MaxHops
	// The newest QCN feedback record the socket took (tcopt/README.md):
	// QCNCount counts the distinct records so far (a change is a new
	// feedback), QCNKey tells repeats apart, QCNFb is its |Fb| (1..QCNFbMax).
	QCNCount uint32
	QCNKey   uint32
	QCNFb    uint8
}

// QCNFbMax is INT_QCN_FB_MAX, the largest quantised |Fb|.
const QCNFbMax = int(C.INT_QCN_FB_MAX)

// echoToC fills a C struct int_echo (zeroed) from e.
func echoToC(e *Echo, ce *C.struct_int_echo) {
	ce.arrived_ns, ce.count, ce.nhops = C.__u64(e.ArrivedNs), C.__u32(e.Count), C.__u8(len(e.Hops))
	if e.Overflow {
		ce.flags = C.INT_ECHO_OVERFLOW
	}
	if e.UE {
		ce.flags |= C.INT_ECHO_UE
	}
	for i, h := range e.Hops {
		ce.hop[i] = C.struct_int_hop{qlen: C.__u32(h.Qlen), tx_bytes: C.__u32(h.TxBytes),
			ts: C.__u32(h.Ts), rate_mbps: C.__u32(h.RateMbps)}
	}
	ce.qcn_count, ce.qcn_key, ce.qcn_fb = C.__u32(e.QCNCount), C.__u32(e.QCNKey), C.__u8(e.QCNFb)
}

// Ack is one ACK (struct law_ack).
type Ack struct {
	NowNs      uint64
	AckedBytes uint32
	ECEBytes   uint32
	CwndSegs   uint32
	MSS        uint32
	SndNxt     uint32
	SndUna     uint32
	RTTus      uint32
	ECE        bool
	// NotCwndLimited: the window did not limit sending (LAW_ACK_NOT_CWND_LIMITED).
	NotCwndLimited bool
	// UE: TCD's undetermined mark came in the INT echo (LAW_ACK_UE).
	UE   bool
	Echo *Echo // nil: no echo
}

// Out is a law's answer to one ACK (struct law_out).
type Out struct {
	CwndBytes  uint64 `json:"cwnd_bytes"`
	CwndSegs   uint32 `json:"cwnd_segs"`
	PacingRate uint64 `json:"pacing_Bps"` // 0 = the law does not pace
	SignalPPM  uint64 `json:"signal_ppm"`
	Trace      Trace  `json:"trace"`
}

func outFromC(o *C.struct_law_out) Out {
	return Out{
		CwndBytes:  uint64(o.cwnd_bytes),
		CwndSegs:   uint32(o.cwnd_segs),
		PacingRate: uint64(o.pacing_rate),
		SignalPPM:  uint64(o.signal_ppm),
		Trace:      Trace(o.trace),
	}
}

// Controller is one connection's law state.
type Controller struct {
	law Law
	p   C.union_law_any_params
	s   C.union_law_any_state
}

// NewController checks p and initialises a connection (<law>_init) whose
// next sequence number is sndNxt; it returns the initial window and pacing.
func NewController(p *Params, sndNxt, mss uint32) (*Controller, Out, error) {
	if err := p.Check(); err != nil {
		return nil, Out{}, err
	}
	c := &Controller{law: p.law, p: p.c}
	var o C.struct_law_out
	C.law_any_init(C.int(c.law), &c.s, &c.p, C.__u32(sndNxt), C.__u32(mss), &o)
	return c, outFromC(&o), nil
}

// SetPathHops tells the law its path's switch count, as the eBPF glue does
// at init from its table of paths (Swift's; the others ignore it).
func (c *Controller) SetPathHops(hops uint32) {
	C.law_any_set_path_hops(C.int(c.law), &c.s, C.__u32(hops))
}

// OnAck runs <law>_on_ack for one ACK.
func (c *Controller) OnAck(a Ack) (Out, error) {
	var ca C.struct_law_ack
	ca.now_ns = C.__u64(a.NowNs)
	ca.acked_bytes = C.__u32(a.AckedBytes)
	ca.ece_bytes = C.__u32(a.ECEBytes)
	ca.cwnd_segs = C.__u32(a.CwndSegs)
	ca.mss = C.__u32(a.MSS)
	ca.snd_nxt = C.__u32(a.SndNxt)
	ca.snd_una = C.__u32(a.SndUna)
	ca.rtt_us = C.__u32(a.RTTus)
	if a.ECE {
		ca.flags |= C.LAW_ACK_ECE
	}
	if a.NotCwndLimited {
		ca.flags |= C.LAW_ACK_NOT_CWND_LIMITED
	}
	if a.UE {
		ca.flags |= C.LAW_ACK_UE
	}
	var echo *C.struct_int_echo
	if a.Echo != nil {
		if len(a.Echo.Hops) > MaxHops {
			return Out{}, fmt.Errorf("echo with %d hops: at most %d", len(a.Echo.Hops), MaxHops)
		}
		var e C.struct_int_echo
		echoToC(a.Echo, &e)
		echo = &e
	}
	var o C.struct_law_out
	C.law_any_on_ack(C.int(c.law), &c.s, &c.p, &ca, echo, &o)
	return outFromC(&o), nil
}

// Trace is the law_out trace bit set (LAW_TR_*).
type Trace uint32

var traceNames = []struct {
	bit  Trace
	name string
}{
	{C.LAW_TR_INIT, "init"},
	{C.LAW_TR_RTT_UPDATE, "rtt"},
	{C.LAW_TR_DECREASE, "dec"},
	{C.LAW_TR_INCREASE, "inc"},
	{C.LAW_TR_HOLD, "hold"},
	{C.LAW_TR_NO_INT, "no_int"},
	{C.LAW_TR_INT_STALE, "int_stale"},
	{C.LAW_TR_INT_SAME, "int_same"},
	{C.LAW_TR_INT_PATH, "int_path"},
	{C.LAW_TR_INT_BAD, "int_bad"},
	{C.LAW_TR_NO_RTT, "no_rtt"},
	{C.LAW_TR_CLAMP_MIN, "clamp_min"},
	{C.LAW_TR_CLAMP_MAX, "clamp_max"},
	{C.LAW_TR_MI, "mi"},
	{C.LAW_TR_AI, "ai"},
	{C.LAW_TR_VAI, "vai"},
	{C.LAW_TR_SF, "sf"},
	{C.LAW_TR_ECE, "ece"},
}

// Has reports whether every bit of f is set.
func (t Trace) Has(f Trace) bool { return t&f == f }

// Trace bits, for tests and callers that test flags by name.
const (
	TrInit     Trace = C.LAW_TR_INIT
	TrRTT      Trace = C.LAW_TR_RTT_UPDATE
	TrDecrease Trace = C.LAW_TR_DECREASE
	TrIncrease Trace = C.LAW_TR_INCREASE
	TrHold     Trace = C.LAW_TR_HOLD
	TrNoINT    Trace = C.LAW_TR_NO_INT
	TrINTStale Trace = C.LAW_TR_INT_STALE
	TrINTSame  Trace = C.LAW_TR_INT_SAME
	TrINTPath  Trace = C.LAW_TR_INT_PATH
	TrINTBad   Trace = C.LAW_TR_INT_BAD
	TrNoRTT    Trace = C.LAW_TR_NO_RTT
	TrClampMin Trace = C.LAW_TR_CLAMP_MIN
	TrClampMax Trace = C.LAW_TR_CLAMP_MAX
	TrMI       Trace = C.LAW_TR_MI
	TrAI       Trace = C.LAW_TR_AI
	TrVAI      Trace = C.LAW_TR_VAI
	TrSF       Trace = C.LAW_TR_SF
	TrECE      Trace = C.LAW_TR_ECE
	PacingNone       = uint64(C.LAW_PACING_NONE)
)

// String lists the set flags joined by '|'.
func (t Trace) String() string {
	var parts []string
	for _, n := range traceNames {
		if t&n.bit != 0 {
			parts = append(parts, n.name)
		}
	}
	return strings.Join(parts, "|")
}

// MarshalText makes JSON show the flag names.
func (t Trace) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// Raw returns a copy of the C parameter struct's bytes (for the fuzzer,
// which overlays them on the law's defaults).
func (p *Params) Raw() []byte {
	return C.GoBytes(unsafe.Pointer(&p.c), C.int(unsafe.Sizeof(p.c)))
}

// AckBatch is a run of ACKs converted to C once (see Controller.OnAckBatch).
type AckBatch struct {
	acks   []C.struct_law_ack
	echoes []C.struct_int_echo
	has    []C.__u8
}

// NewAckBatch converts acks for OnAckBatch.
func NewAckBatch(acks []Ack) (*AckBatch, error) {
	n := len(acks)
	b := &AckBatch{make([]C.struct_law_ack, n), make([]C.struct_int_echo, n), make([]C.__u8, n)}
	for i, a := range acks {
		if a.Echo != nil && len(a.Echo.Hops) > MaxHops {
			return nil, fmt.Errorf("ack %d: echo with %d hops: at most %d", i, len(a.Echo.Hops), MaxHops)
		}
		b.acks[i] = C.struct_law_ack{now_ns: C.__u64(a.NowNs), acked_bytes: C.__u32(a.AckedBytes),
			ece_bytes: C.__u32(a.ECEBytes), cwnd_segs: C.__u32(a.CwndSegs), mss: C.__u32(a.MSS),
			snd_nxt: C.__u32(a.SndNxt), snd_una: C.__u32(a.SndUna), rtt_us: C.__u32(a.RTTus)}
		if a.ECE {
			b.acks[i].flags = C.LAW_ACK_ECE
		}
		if a.NotCwndLimited {
			b.acks[i].flags |= C.LAW_ACK_NOT_CWND_LIMITED
		}
		if a.UE {
			b.acks[i].flags |= C.LAW_ACK_UE
		}
		if a.Echo != nil {
			b.has[i] = 1
			echoToC(a.Echo, &b.echoes[i])
		}
	}
	return b, nil
}

// Len is the number of ACKs in the batch.
func (b *AckBatch) Len() int { return len(b.acks) }

// OnAckBatch runs the law over the batch in one call into C and returns
// the last output: the law's own cost, without a cgo call per ACK.
func (c *Controller) OnAckBatch(b *AckBatch) Out {
	var o C.struct_law_out
	if len(b.acks) == 0 {
		return Out{}
	}
	C.law_any_on_acks(C.int(c.law), &c.s, &c.p, &b.acks[0], &b.echoes[0], &b.has[0], C.size_t(len(b.acks)), &o)
	return outFromC(&o)
}
