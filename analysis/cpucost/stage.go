// Package cpucost turns a perf profile of a run (`perf script` of
// `perf record -a -g`) into where the CPU time went: each sample is given
// the stage of the packet's way through the emulated fabric (or the run's
// own machinery) that was running, per CPU. docs/performance.md, "Where
// the packet CPU goes", holds the tables it makes.
package cpucost

import (
	"regexp"
	"strings"
)

// A Stage is one step of a packet's way through the fabric, or one part of
// the run that is not a packet's way (the samplers, the Go runtime, idle).
type Stage string

// The stages, in the order tables list them.
const (
	StageQdisc     Stage = "qdisc (HTB, bfifo)"
	StageVeth      Stage = "veth crossing, backlog, tc dispatch"
	StageForward   Stage = "IP forwarding (switches)"
	StageSwitchBPF Stage = "INT switch (BPF)"
	StageDelayBPF  Stage = "delay redirect (BPF)"
	StageLine      Stage = "delay line (read, hold, send)"
	StageAgent     Stage = "host agent (BPF sockops)"
	StageLawBPF    Stage = "law (BPF struct_ops)"
	StageGSO       Stage = "GSO/GRO segmentation"
	StageTCP       Stage = "host TCP stack"
	StageCapture   Stage = "capture"
	StageSkb       Stage = "skb alloc, copy, free"
	StageIRQ       Stage = "interrupt entry (IPIs, timers)"
	StageWorkload  Stage = "workload (Go: flows)"
	StageQueueSmp  Stage = "switch queue sampling (Go)"
	StageHealth    Stage = "health sampler (Go)"
	StageCPUProbe  Stage = "CPU queue probe"
	StageSockSmp   Stage = "socket sampler (Go)"
	StageGoRuntime Stage = "Go runtime"
	StageOtherKern Stage = "other kernel"
	StageOtherUser Stage = "other processes"
	StageProfiler  Stage = "perf itself"
	StageIdle      Stage = "idle"
)

// Stages lists every stage in table order.
var Stages = []Stage{StageQdisc, StageVeth, StageForward, StageSwitchBPF, StageDelayBPF,
	StageLine, StageAgent, StageLawBPF, StageGSO, StageTCP, StageCapture, StageSkb,
	StageIRQ, StageWorkload, StageQueueSmp, StageHealth, StageCPUProbe, StageSockSmp, StageGoRuntime,
	StageOtherKern, StageOtherUser, StageProfiler, StageIdle}

// PacketStages are the stages of a packet's way (what a faster path cuts).
var PacketStages = map[Stage]bool{StageQdisc: true, StageVeth: true, StageForward: true,
	StageSwitchBPF: true, StageDelayBPF: true, StageLine: true, StageAgent: true,
	StageLawBPF: true, StageGSO: true, StageTCP: true, StageCapture: true, StageSkb: true, StageIRQ: true}

// A rule gives a frame's symbol its stage.
type rule struct {
	re    *regexp.Regexp
	stage Stage
}

func rules(pairs ...string) []rule {
	var rs []rule
	for i := 0; i+1 < len(pairs); i += 2 {
		rs = append(rs, rule{regexp.MustCompile(pairs[i]), Stage(pairs[i+1])})
	}
	return rs
}

// kernelRules: the leaf-most frame that matches one decides a kernel
// stack's stage; frames that match none (locks, memcpy, map helpers) are
// passed over, so a sample inside a helper goes to the stage that called
// it. JIT-compiled BPF programs are named bpf_prog_<tag>_<name>.
var kernelRules = rules(
	`^bpf_prog_\w+_int_switch_`, string(StageSwitchBPF),
	`^bpf_trace_run\d+$`, string(StageSwitchBPF), // the switch's tp_btf hooks
	`^bpf_prog_\w+_delay_`, string(StageDelayBPF),
	`^bpf_prog_\w+_(cclab_int|int_agent|agent|sockops)`, string(StageAgent),
	`^bpf_prog_\w+_`, string(StageLawBPF),
	`^(tpacket_rcv|tpacket_|prb_|__packet_rcv_has_room|packet_poll)`, string(StageCapture),
	`^(packet_rcv|packet_recvmsg|packet_sendmsg|packet_snd|packet_direct_xmit|packet_pick_tx)`, string(StageLine),
	`^(skb_segment|__skb_gso_segment|skb_mac_gso_segment|tcp_gso_segment|tcp4_gso_segment|inet_gso_segment|__tcp_gso_segment|dev_gro_receive|napi_gro_|gro_|tcp_gro_|tcp4_gro_|inet_gro_)`, string(StageGSO),
	`^(htb_|bfifo_|pfifo_|qdisc_|__qdisc_|sch_direct_xmit|dev_qdisc_enqueue|net_tx_action|tbf_)`, string(StageQdisc),
	`^(ip_forward|ip_route_input|ip_route_use_hint|fib_|ip_rcv|ip_sublist_rcv|ip_list_rcv|ip_finish_output|ip_output|neigh_|inet_lookup_ifaddr|ip_skb_dst_mtu|__ip_finish_output|ip_mc_|nf_hook_slow)`, string(StageForward),
	`^(veth_|__netif_rx|netif_rx|enqueue_to_backlog|process_backlog|get_rps_cpu|__netif_receive_skb|netif_receive_skb|eth_type_trans|dev_hard_start_xmit|__dev_queue_xmit|validate_xmit_skb|netif_skb_features|tcx_|tc_run|sch_handle_|skb_do_redirect|__bpf_redirect|bpf_redirect|net_rx_action|__napi_poll|napi_|rps_)`, string(StageVeth),
	`^(tcp_|__tcp_|inet_|__inet_|ip_queue_xmit|__ip_queue_xmit|ip_local_deliver|ip_local_out|__ip_local_out|ip_protocol_deliver|skb_copy_datagram|__skb_datagram_iter|ipv4_dst_check|__x64_sys_(sendto|recvfrom|sendmsg|recvmsg|read|write|connect|accept)|sock_sendmsg|sock_recvmsg|sock_read_iter|sock_write_iter)`, string(StageTCP),
	`^(__alloc_skb|alloc_skb|kfree_skb|__kfree_skb|skb_release|consume_skb|skb_clone|pskb_expand_head|__pskb_pull_tail|skb_copy|kmem_cache_|__kmalloc|kfree|napi_skb_cache)`, string(StageSkb),
)

// goRules: a Go stack (the runner) is the stage of its leaf-most frame that
// matches, so the monitors' syscalls count as monitoring.
var goRules = rules(
	`cclab/orchestrator/capture\.`, string(StageCapture),
	`cclab/orchestrator/delay`, string(StageLine),
	`cclab/tcopt/intswitch\.`, string(StageQueueSmp),
	`cclab/orchestrator/health\.`, string(StageHealth),
	`cclab/orchestrator/cpuqueue\.|cclab/internal/icmpecho\.`, string(StageCPUProbe),
	`cclab/orchestrator/tcpsample\.|cclab/orchestrator/watch\.`, string(StageSockSmp),
	`cclab/orchestrator/flows\.|cclab/orchestrator/workload\.`, string(StageWorkload),
)

// lineSymbols are the delay line's own C functions (orchestrator/delay/line).
var lineSymbols = regexp.MustCompile(`^(dl_|read_port|release|read_ready|loop|send_frame|fifo_|hold_in|frame_src|frame_stamp|rec_|hist_add|thread_cpu_ns)$`)

// softirqFrames mark a stack in softirq context (packet work run on the
// way out of an interrupt or a bottom-half section, whoever was running).
var softirqFrames = map[string]bool{"handle_softirqs": true, "__do_softirq": true, "net_rx_action": true, "net_tx_action": true}

var idleLeaves = map[string]bool{"pv_native_safe_halt": true, "default_idle": true, "native_safe_halt": true, "poll_idle": true, "cpuidle_enter_state": true, "haltpoll_enter_idle": true, "acpi_idle_do_entry": true}

// irqLeaves: a sample whose leaf is where softirq processing begins, or
// where interrupts come back on, stands for the time interrupts were off
// just before it (perf's cpu-clock cannot sample there): the interrupt's
// entry, in a VM an exit, and for an IPI its sender's cross-CPU kick. The
// caller chain says which interrupt.
var irqLeaves = map[string]bool{"handle_softirqs": true, "__do_softirq": true, "irq_exit_rcu": true, "__irq_exit_rcu": true}

var irqEntries = regexp.MustCompile(`^(sysvec_|asm_sysvec_|flush_smp_call_function|__sysvec_|generic_smp_call_function)`)

// Classify gives a sample its stage and whether it ran in softirq context.
func Classify(s Sample) (Stage, bool) {
	soft := false
	for _, f := range s.Frames {
		if softirqFrames[f.Sym] {
			soft = true
			break
		}
	}
	if len(s.Frames) > 0 && idleLeaves[s.Frames[0].Sym] {
		return StageIdle, false
	}
	if len(s.Frames) > 1 && irqLeaves[s.Frames[0].Sym] {
		for _, f := range s.Frames[1:min(len(s.Frames), 4)] {
			if irqEntries.MatchString(f.Sym) {
				return StageIRQ, soft
			}
		}
	}
	if s.Comm == "perf" || strings.HasPrefix(s.Comm, "perf-") {
		if !soft {
			return StageProfiler, false
		}
	}
	if !soft {
		// Process context: the delay line's thread, or a Go monitor's
		// stack, is that part, whatever the kernel did for it; the
		// workload's own sockets count by their kernel stage.
		for _, f := range s.Frames {
			if f.User && lineSymbols.MatchString(f.Sym) {
				return StageLine, false
			}
		}
		if st, ok := goStage(s.Frames); ok && st != StageWorkload {
			return st, false
		}
	}
	for _, f := range s.Frames {
		if f.User {
			break
		}
		for _, r := range kernelRules {
			if r.re.MatchString(f.Sym) {
				return r.stage, soft
			}
		}
	}
	if soft {
		return StageOtherKern, true
	}
	if st, ok := goStage(s.Frames); ok {
		return st, false
	}
	for _, f := range s.Frames {
		if f.User && strings.HasPrefix(f.Sym, "runtime.") && s.Comm == "cclab" {
			return StageGoRuntime, false
		}
	}
	if s.Comm == "cclab" {
		if len(s.Frames) > 0 && !s.Frames[0].User {
			return StageOtherKern, false
		}
		return StageGoRuntime, false
	}
	return StageOtherUser, false
}

// goStage is the stage of the leaf-most Go frame a goRule names.
func goStage(frames []Frame) (Stage, bool) {
	for _, f := range frames {
		if !f.User {
			continue
		}
		for _, r := range goRules {
			if r.re.MatchString(f.Sym) {
				return r.stage, true
			}
		}
	}
	return "", false
}
