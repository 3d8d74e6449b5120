package delay

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
	"cclab/internal/tcx"
	"cclab/topology"
)

// Classic filters (kernels without tcx): under path placement the take
// program is the first on its port's egress, before the INT switch's
// counter (tcopt/intswitch, prio 2); under link placement it follows the
// switch's stamp on the port's ingress.
const (
	classicPrio   = 1
	classicPrioIn = 3
	classicHandle = 0xde1a
	classicName   = "cclab_delay"
	// prioMajor is the handle major of a netem sink's prio qdisc.
	prioMajor = 0xde
	// netemLimit is how many packets each netem band may hold.
	netemLimit = 1 << 20
)

// Sink names the veth pair a port's delayed packets go through, in the
// port's node namespace: the sink (where the take program sends them)
// and its peer (where they come out). The k-th delayed port of a node
// gets dl<k> and dl<k>p.
func Sink(k int) (sink, peer string) {
	return fmt.Sprintf("dl%d", k), fmt.Sprintf("dl%dp", k)
}

// sinkIndex numbers each switch's delayed ports in placement order.
func sinkIndex(pl *Placement) []int {
	next := map[string]int{}
	out := make([]int, len(pl.Ports))
	for i, p := range pl.Ports {
		out[i] = next[p.Node]
		next[p.Node]++
	}
	return out
}

// Options say where the plumbing lives.
type Options struct {
	// Netns returns the namespace of a node.
	Netns func(node string) string
	// PinDir is the run's BPF pin directory; tcx links are pinned there
	// so that the delay lasts as long as the network, not the process.
	PinDir string
	Engine Engine // resolved: EngineNetem or EngineLine
}

// Plumb builds the delay of every port of pl on a built network: the sink
// veth pair, the tc programs (tcx links pinned under PinDir, or classic
// filters that live with their devices) and, for the netem engine, the
// sink's prio qdisc with one netem band per class. Run it before the INT
// switch attaches. Everything it makes lives in the run's namespaces or
// pin directory, so removing the run removes it.
func Plumb(ctx context.Context, pl *Placement, opt Options) error {
	if pl.Empty() {
		return nil
	}
	if opt.Engine != EngineNetem && opt.Engine != EngineLine {
		return fmt.Errorf("delay: plumb with engine %q (resolve it first)", opt.Engine)
	}
	if err := CheckEngine(pl, opt.Engine); err != nil {
		return err
	}
	useTCX, err := tcx.Supported()
	if err != nil {
		return err
	}
	spec, err := loadDelaybpf()
	if err != nil {
		return fmt.Errorf("delay: load BPF spec: %w", err)
	}
	if useTCX {
		if err := os.MkdirAll(filepath.Join(opt.PinDir, "delay"), 0o700); err != nil {
			return fmt.Errorf("delay: pin directory: %w", err)
		}
	}
	for i, p := range pl.Ports {
		if err := ctx.Err(); err != nil {
			return err
		}
		sink, peer := Sink(sinkIndex(pl)[i])
		err := nsexec.Do(opt.Netns(p.Node), func() error {
			return plumbPort(spec, p, sink, peer, opt, useTCX, pl.Link())
		})
		if err != nil {
			return fmt.Errorf("delay on %s: %w", p.Name(), err)
		}
	}
	return nil
}

// plumbPort runs inside the port's node namespace.
func plumbPort(spec *ebpf.CollectionSpec, p PortPlan, sink, peer string, opt Options, useTCX, perLink bool) error {
	h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("netlink: %w", err)
	}
	defer h.Close()
	port, err := h.LinkByName(p.Iface)
	if err != nil {
		return fmt.Errorf("port %s: %w", p.Iface, err)
	}
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: sink, MTU: topology.MTU}, PeerName: peer}
	if err := h.LinkAdd(v); err != nil {
		return fmt.Errorf("sink %s: %w", sink, err)
	}
	sl, err := h.LinkByName(sink)
	if err != nil {
		return err
	}
	pl, err := h.LinkByName(peer)
	if err != nil {
		return err
	}
	if opt.Engine == EngineNetem {
		if err := netemBands(h, sl, p); err != nil {
			return err
		}
	}
	for _, l := range []netlink.Link{sl, pl} {
		if err := h.LinkSetUp(l); err != nil {
			return fmt.Errorf("up %s: %w", l.Attrs().Name, err)
		}
	}

	cs := spec.Copy()
	engine := uint32(delayEngineLine)
	if opt.Engine == EngineNetem {
		engine = delayEngineNetem
	}
	for name, val := range map[string]uint32{
		"sink_ifindex": uint32(sl.Attrs().Index), "port_ifindex": uint32(port.Attrs().Index),
		"engine": engine, "prio_major": prioMajor,
	} {
		if err := cs.Variables[name].Set(val); err != nil {
			return fmt.Errorf("program constant %s: %w", name, err)
		}
	}
	var objs delaybpfObjects
	if err := cs.LoadAndAssign(&objs, nil); err != nil {
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return fmt.Errorf("load delay programs: %+v", ve)
		}
		return fmt.Errorf("load delay programs: %w", err)
	}
	defer objs.Close() // the attached programs keep what they use
	for a, k := range p.Sources {
		b := a.As4()
		key := binary.NativeEndian.Uint32(b[:]) // the address as the packet holds it
		if err := objs.Sources.Put(key, uint32(k)); err != nil {
			return fmt.Errorf("source %s: %w", a, err)
		}
	}
	out := objs.DelayDrop
	if opt.Engine == EngineNetem {
		out = objs.DelayReturn
	}
	attach := func(l netlink.Link, prog *ebpf.Program, ingress bool, pin string, prio uint16) error {
		if useTCX {
			return attachTCX(l, prog, ingress, filepath.Join(opt.PinDir, "delay", pin))
		}
		return attachClassic(h, l, prog, ingress, prio)
	}
	// The ways out first: nothing reaches the sink before its peer is
	// ready for it, nor the line's sends the sink before it passes them
	// on.
	if err := attach(pl, out, true, p.Node+"-"+peer, classicPrio); err != nil {
		return err
	}
	if !perLink {
		return attach(port, objs.DelayTake, false, p.Node+"-"+p.Iface, classicPrio)
	}
	if err := attach(sl, objs.DelayInject, true, p.Node+"-"+sink, classicPrio); err != nil {
		return err
	}
	return attach(port, objs.DelayTake, true, p.Node+"-"+p.Iface+"-in", classicPrioIn)
}

// CheckEngine refuses a placement an engine cannot hold: link placement
// needs the line (re-receiving what netem released is not built).
func CheckEngine(pl *Placement, e Engine) error {
	if pl.Link() && e == EngineNetem {
		return fmt.Errorf("delay: link placement needs the line engine (emulation.delay_engine: line); netem is path placement only")
	}
	return nil
}

// netemBands gives the sink a prio qdisc with one band per class, each a
// netem of the class's delay. The take program picks the band.
func netemBands(h *netlink.Handle, sink netlink.Link, p PortPlan) error {
	bands := max(2, len(p.Classes)) // prio wants at least two
	prio := netlink.NewPrio(netlink.QdiscAttrs{LinkIndex: sink.Attrs().Index, Handle: netlink.MakeHandle(prioMajor, 0), Parent: netlink.HANDLE_ROOT})
	prio.Bands = uint8(bands)
	// Every priority to band 0: the take program classifies each packet
	// itself, and the library's default map names bands 0-2, which a
	// two-band prio refuses (EINVAL).
	prio.PriorityMap = [16]uint8{}
	if err := h.QdiscAdd(prio); err != nil {
		return fmt.Errorf("prio qdisc on %s: %w", sink.Attrs().Name, err)
	}
	for k, d := range p.Classes {
		q := netlink.NewNetem(netlink.QdiscAttrs{
			LinkIndex: sink.Attrs().Index,
			Parent:    netlink.MakeHandle(prioMajor, uint16(k+1)),
			Handle:    netlink.MakeHandle(uint16(0x100+k), 0),
		}, netlink.NetemQdiscAttrs{Latency: uint32(d.Microseconds()), Limit: netemLimit})
		if err := h.QdiscAdd(q); err != nil {
			return fmt.Errorf("netem %v on %s: %w", d, sink.Attrs().Name, err)
		}
	}
	return nil
}

func attachTCX(l netlink.Link, prog *ebpf.Program, ingress bool, pin string) error {
	at := ebpf.AttachTCXEgress
	if ingress {
		at = ebpf.AttachTCXIngress
	}
	lk, err := link.AttachTCX(link.TCXOptions{Interface: l.Attrs().Index, Program: prog, Attach: at, Anchor: link.Head()})
	if err != nil {
		return fmt.Errorf("attach %s to %s: %w", prog, l.Attrs().Name, err)
	}
	defer lk.Close()
	if err := lk.Pin(pin); err != nil {
		return fmt.Errorf("pin %s: %w", pin, err)
	}
	return nil
}

func attachClassic(h *netlink.Handle, l netlink.Link, prog *ebpf.Program, ingress bool, prio uint16) error {
	clsact := &netlink.GenericQdisc{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: l.Attrs().Index, Handle: netlink.MakeHandle(0xffff, 0), Parent: netlink.HANDLE_CLSACT},
		QdiscType:  "clsact",
	}
	if err := h.QdiscAdd(clsact); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("clsact on %s: %w", l.Attrs().Name, err)
	}
	parent := uint32(netlink.HANDLE_MIN_EGRESS)
	if ingress {
		parent = netlink.HANDLE_MIN_INGRESS
	}
	f := &netlink.BpfFilter{
		FilterAttrs: netlink.FilterAttrs{
			LinkIndex: l.Attrs().Index, Parent: parent, Handle: classicHandle,
			Priority: prio, Protocol: unix.ETH_P_ALL,
		},
		Fd: prog.FD(), Name: classicName, DirectAction: true,
	}
	if err := h.FilterAdd(f); err != nil {
		return fmt.Errorf("cls_bpf on %s: %w", l.Attrs().Name, err)
	}
	return nil
}
