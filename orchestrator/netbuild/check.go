package netbuild

import (
	"fmt"
	"os"
	"strings"
	"time"

	"cclab/internal/runid"
	"cclab/topology"
)

// check refuses what would fail half-way, before anything is created.
func check(id runid.ID, p *topology.Plan, opt Options) error {
	if _, err := runid.Parse(string(id)); err != nil {
		return err
	}
	if p == nil || len(p.Nodes) == 0 {
		return fmt.Errorf("build: empty plan")
	}
	if opt.ECN < 0 || opt.ECN > 2 {
		return fmt.Errorf("options: ECN %d: want 0, 1 or 2 (net.ipv4.tcp_ecn)", opt.ECN)
	}
	if opt.GSOMaxSize != 0 && (opt.GSOMaxSize < topology.MTU || opt.GSOMaxSize > 65536) {
		return fmt.Errorf("options: GSOMaxSize %d: want 0 (kernel default) or %d..65536", opt.GSOMaxSize, topology.MTU)
	}
	if opt.RTOMin < 0 || (opt.RTOMin > 0 && opt.RTOMin < time.Millisecond) {
		return fmt.Errorf("options: RTOMin %v: want 0 (the kernel's) or at least 1ms (the route metric is in ms)", opt.RTOMin)
	}
	if opt.Lossless && opt.NICQueues > 1 {
		return fmt.Errorf("options: a lossless network has one FIFO per port; NICQueues %d needs HTB", opt.NICQueues)
	}
	if opt.SharedBuffer != 0 && !opt.Lossless {
		return fmt.Errorf("options: a shared buffer (%v) without Lossless", opt.SharedBuffer)
	}
	avail, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return fmt.Errorf("options: read available congestion control: %w", err)
	}
	if !hasWord(string(avail), opt.DefaultCC) {
		return fmt.Errorf("options: congestion control %q is not registered in this kernel (available: %s); load it first", opt.DefaultCC, strings.TrimSpace(string(avail)))
	}
	for k := range opt.Sysctls {
		if strings.Contains(k, "..") || strings.Contains(k, "/") {
			return fmt.Errorf("options: bad sysctl name %q", k)
		}
	}
	seen := map[string]bool{}
	for _, nd := range p.Nodes {
		if seen[nd.Name] {
			return fmt.Errorf("build: two nodes are called %q", nd.Name)
		}
		seen[nd.Name] = true
		if len(id.Netns(nd.Name)) > 255 || strings.ContainsRune(nd.Name, '/') {
			return fmt.Errorf("build: node name %q cannot name a namespace", nd.Name)
		}
	}
	ifaces := map[string]bool{}
	for _, e := range p.Egress() {
		if !seen[e.Node] {
			return fmt.Errorf("build: link end on unknown node %q", e.Node)
		}
		if len(e.Iface) == 0 || len(e.Iface) > 15 {
			return fmt.Errorf("build: interface %q on %s: names are 1-15 characters", e.Iface, e.Node)
		}
		if ifaces[e.Node+"/"+e.Iface] {
			return fmt.Errorf("build: two interfaces %q on %s", e.Iface, e.Node)
		}
		ifaces[e.Node+"/"+e.Iface] = true
		if e.Buffer < topology.MTU {
			return fmt.Errorf("build: buffer %v on %s %s is smaller than one MTU", e.Buffer, e.Node, e.Iface)
		}
		if e.Rate == 0 {
			return fmt.Errorf("build: no rate on %s %s", e.Node, e.Iface)
		}
	}
	return nil
}

func hasWord(list, w string) bool {
	for _, f := range strings.Fields(list) {
		if f == w {
			return true
		}
	}
	return false
}
