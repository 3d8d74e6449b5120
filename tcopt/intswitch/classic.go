package intswitch

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"cclab/internal/nsexec"
)

// The classic tc programs are cls_bpf filters (direct action) on a clsact
// qdisc, at the second priority: tcx programs run before every classic
// filter, and the delay's (orchestrator/delay) take a port's packets at
// the first, before the switch counts them entering its queue. They
// return TC_ACT_UNSPEC, so the filters after them still run.
const (
	classicPrio   = 2
	classicHandle = 0xcc1a
	classicName   = "cclab_int_switch"
)

// A classicFilter is one filter the switch added, and whether it added
// the clsact qdisc under it too.
type classicFilter struct {
	ifc      iface
	parent   uint32 // netlink.HANDLE_MIN_INGRESS or HANDLE_MIN_EGRESS
	progID   ebpf.ProgramID
	ownQdisc bool
}

func (f *classicFilter) attrs() netlink.FilterAttrs {
	return netlink.FilterAttrs{
		LinkIndex: f.ifc.ifindex,
		Parent:    f.parent,
		Handle:    classicHandle,
		Priority:  classicPrio,
		Protocol:  unix.ETH_P_ALL,
	}
}

// attachClassic adds prog as a filter on i's ingress or egress, adding a
// clsact qdisc first if the device has none. On error nothing is left.
func attachClassic(i iface, prog *ebpf.Program, ingress bool) (*classicFilter, error) {
	info, err := prog.Info()
	if err != nil {
		return nil, fmt.Errorf("program info of %s: %w", prog, err)
	}
	id, ok := info.ID()
	if !ok {
		return nil, fmt.Errorf("program %s has no id", prog)
	}
	f := &classicFilter{ifc: i, parent: netlink.HANDLE_MIN_EGRESS, progID: id}
	where := "egress"
	if ingress {
		f.parent, where = netlink.HANDLE_MIN_INGRESS, "ingress"
	}
	err = inNetlink(i.netns, func(h *netlink.Handle) error {
		lnk, err := h.LinkByIndex(i.ifindex)
		if err != nil {
			return err
		}
		has, err := hasClsact(h, lnk)
		if err != nil {
			return err
		}
		if !has {
			if err := h.QdiscAdd(clsactOf(lnk)); err != nil {
				return fmt.Errorf("add clsact qdisc: %w", err)
			}
			f.ownQdisc = true
		}
		bf := &netlink.BpfFilter{FilterAttrs: f.attrs(), Fd: prog.FD(), Name: classicName, DirectAction: true}
		if err := h.FilterAdd(bf); err != nil {
			if f.ownQdisc {
				_ = h.QdiscDel(clsactOf(lnk))
			}
			return fmt.Errorf("add cls_bpf filter (%s, prio %d): %w", where, classicPrio, err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("attach %s to %s in %s: %w", prog, i.name, i.netns, err)
	}
	return f, nil
}

// detach removes the filter if it is still ours (same place, same
// program), and the clsact qdisc if the switch added it and no filter is
// left on it. A device or namespace already gone took both with it.
func (f *classicFilter) detach() error {
	err := inNetlink(f.ifc.netns, func(h *netlink.Handle) error {
		lnk, err := h.LinkByIndex(f.ifc.ifindex)
		if err != nil {
			var nf netlink.LinkNotFoundError
			if errors.As(err, &nf) {
				return nil
			}
			return err
		}
		left := 0
		for _, parent := range []uint32{netlink.HANDLE_MIN_INGRESS, netlink.HANDLE_MIN_EGRESS} {
			fs, err := h.FilterList(lnk, parent)
			if err != nil {
				return fmt.Errorf("list filters: %w", err)
			}
			for _, x := range fs {
				if parent == f.parent && f.ours(x) {
					if err := h.FilterDel(&netlink.BpfFilter{FilterAttrs: f.attrs()}); err != nil {
						return fmt.Errorf("delete cls_bpf filter: %w", err)
					}
					continue
				}
				left++
			}
		}
		if !f.ownQdisc || left > 0 {
			return nil
		}
		if err := h.QdiscDel(clsactOf(lnk)); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("delete clsact qdisc: %w", err)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil // the namespace is gone
	}
	if err != nil {
		return fmt.Errorf("detach filter from %s in %s: %w", f.ifc.name, f.ifc.netns, err)
	}
	return nil
}

func (f *classicFilter) ours(x netlink.Filter) bool {
	bf, ok := x.(*netlink.BpfFilter)
	return ok && bf.Handle == classicHandle && bf.Priority == classicPrio &&
		bf.Id == int(f.progID)
}

func clsactOf(lnk netlink.Link) *netlink.GenericQdisc {
	return &netlink.GenericQdisc{
		QdiscAttrs: netlink.QdiscAttrs{
			LinkIndex: lnk.Attrs().Index,
			Handle:    netlink.MakeHandle(0xffff, 0),
			Parent:    netlink.HANDLE_CLSACT,
		},
		QdiscType: "clsact",
	}
}

// hasClsact reports whether lnk has a clsact qdisc; a plain ingress qdisc
// (which excludes clsact) is an error.
func hasClsact(h *netlink.Handle, lnk netlink.Link) (bool, error) {
	qs, err := h.QdiscList(lnk)
	if err != nil {
		return false, fmt.Errorf("list qdiscs: %w", err)
	}
	for _, q := range qs {
		switch q.Type() {
		case "clsact":
			return true, nil
		case "ingress":
			return false, fmt.Errorf("device has an ingress qdisc; the classic switch needs clsact")
		}
	}
	return false, nil
}

// inNetlink runs fn with a netlink handle opened inside namespace ns.
func inNetlink(ns string, fn func(*netlink.Handle) error) error {
	return nsexec.Do(ns, func() error {
		h, err := netlink.NewHandle(unix.NETLINK_ROUTE)
		if err != nil {
			return fmt.Errorf("netlink: %w", err)
		}
		defer h.Close()
		return fn(h)
	})
}
