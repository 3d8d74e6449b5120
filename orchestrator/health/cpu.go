package health

// CPU summarises CPU use over the sampling windows.
type CPU struct {
	CPUs int `json:"cpus"`
	// MeanBusy is the whole run's busy share of all CPUs (0-1).
	MeanBusy float64 `json:"mean_busy"`
	// MaxBusy is the busiest window's share of all CPUs.
	MaxBusy float64 `json:"max_busy"`
	// PacketCPUs process packets (all when empty). SaturatedShare is the
	// share of windows in which they could not keep up: they spent at
	// least 90 % of their time in softirq (which preempts everything
	// else, so packet work was all they did), or a softirq run ended with
	// packets left over (time squeeze). BusyShare counts the windows in
	// which they were at least 95 % busy with anything (processes
	// included, which packet processing preempts).
	PacketCPUs     []int   `json:"packet_cpus,omitempty"`
	SaturatedShare float64 `json:"saturated_share"`
	BusyShare      float64 `json:"busy_share"`
	// UserCPUs are the CPUs the runner's own threads were confined to
	// (the workload's senders and receivers among them; run.json
	// user_cpus), none when the scheduler placed them. UserSaturatedShare
	// is the share of windows in which those CPUs were at least 95 %
	// busy: then the workload could not offer what it meant to.
	UserCPUs           []int   `json:"user_cpus,omitempty"`
	UserSaturatedShare float64 `json:"user_saturated_share,omitempty"`
	// PacketSoftirq is the packet CPUs' share of time in softirq, over the
	// run and in the busiest window.
	PacketSoftirq    float64 `json:"packet_softirq_share"`
	MaxPacketSoftirq float64 `json:"max_packet_softirq_share"`
	// Backlog is the packets waiting in the CPUs' input backlogs, sampled
	// once per window: the median and largest sample.
	BacklogMedian uint64 `json:"backlog_median_packets"`
	BacklogMax    uint64 `json:"backlog_max_packets"`
	// MaxOneCPU is the busiest single CPU in any window.
	MaxOneCPU float64 `json:"max_one_cpu"`
	// Softirq is the share of all CPU time spent in softirq, over the
	// run and in its busiest window: the kernel's packet processing.
	Softirq    float64 `json:"softirq_share"`
	MaxSoftirq float64 `json:"max_softirq_share"`
	// Stolen is the share of all CPU time the hypervisor gave to others
	// while these CPUs wanted to run, over the run; MaxStolenOneCPU the
	// largest share of one CPU in one window. A stolen millisecond is a
	// millisecond in which no packet, timer or delay line moved: on a
	// machine that is not its own, lateness follows.
	Stolen          float64 `json:"stolen_share"`
	MaxStolenOneCPU float64 `json:"max_stolen_share_one_cpu"`
	Windows         int     `json:"windows"`
}
