package experiment

import (
	"time"

	"gopkg.in/yaml.v3"

	"cclab/internal/units"
	"cclab/internal/yamlerr"
	"cclab/kmod/law"
)

// Experiment is one parsed experiment file.
type Experiment struct {
	Name        string         `yaml:"name" json:"name"`
	Description string         `yaml:"description" json:"description,omitempty"`
	Topology    string         `yaml:"topology" json:"topology"` // path, relative to the experiment file
	Seed        int64          `yaml:"seed" json:"seed"`
	CC          string         `yaml:"cc" json:"cc"`           // default congestion control of every flow
	Compare     []string       `yaml:"compare" json:"compare"` // run once per cc (replaces the default cc)
	SkipMissing bool           `yaml:"skip_missing" json:"skip_missing"`
	Hosts       Hosts          `yaml:"hosts" json:"hosts"`
	Capture     Capture        `yaml:"capture" json:"capture"`
	Timeout     units.Duration `yaml:"timeout" json:"timeout_ns"` // a flow not done this long after its start fails
	Switch      *Switch        `yaml:"switch" json:"switch,omitempty"`
	Trace       bool           `yaml:"trace" json:"trace"` // per-ACK law trace into cc_trace.csv
	// Watch, when not 0, records `cclab watch`'s stream every Watch into
	// the run's watch.jsonl (each socket's window, RTTs and rates, each
	// switch port's queue and utilisation).
	Watch units.Duration `yaml:"watch" json:"watch_ns,omitempty"`
	// Profile records where the CPU time of each variant's workload went:
	// `perf record -a -g` into perf.data, classified into the stages of a
	// packet's way and the run's own parts (analysis/cpucost) in
	// cpu_cost.json and cpu_cost.txt.
	Profile bool `yaml:"profile" json:"profile,omitempty"`
	// Laws are parameters of cclab's eBPF laws, as `cclab cc load` takes
	// them ("name" for every law that has it, "law.name" for one). With
	// this section the run registers the laws it uses with these
	// parameters (or checks that they are registered with them).
	Laws     map[string]string `yaml:"laws" json:"laws,omitempty"`
	LawsLine int               `yaml:"-" json:"-"`
	// LawSet is Laws parsed and checked against the law table
	// (lawsettings.go): generic parameters first, then those of one law,
	// each in name order, so that a law's own wins.
	LawSet   law.Settings   `yaml:"-" json:"-"`
	lawLines map[string]int // Laws' keys -> their lines
	// Variants are laws registered under names of their own with
	// settings of their own (a parameter name of the law -> value), for
	// `compare`: e.g. hpcc_vaisf: {law: hpcc, set: {vai_enable: 1}}. The
	// run registers them as it registers `laws:` (those settings, the
	// calibration's, then the variant's own).
	Variants map[string]VariantSpec `yaml:"variants" json:"variants,omitempty"`
	// Events change links at times of the run; Schedule repeats changes
	// periodically (events.go).
	Events   []LinkEvent `yaml:"events" json:"events,omitempty"`
	Schedule *Schedule   `yaml:"schedule" json:"schedule,omitempty"`
	// Emulation says how the fabric is emulated and judged.
	Emulation Emulation `yaml:"emulation" json:"emulation"`
	Workload  []Entry   `yaml:"workload" json:"workload"`
	// Reproduce is the reproduction suite's part of a file in
	// experiments/reproduce/: the paper's claims and how to measure them.
	// `cclab run` ignores it; `cclab reproduce` reads it
	// (package cclab/reproduce, docs/reproduction.md).
	Reproduce yaml.Node `yaml:"reproduce" json:"-"`

	// File is the path the experiment was read from; TopologyPath the
	// topology file resolved against it.
	File         string `yaml:"-" json:"file"`
	TopologyPath string `yaml:"-" json:"topology_path"`
	Line         int    `yaml:"-" json:"-"`
	CompareLines []int  `yaml:"-" json:"-"` // the line of each of Compare's names
	// TopologyPos is where the file names its topology.
	TopologyPos yamlerr.Pos `yaml:"-" json:"-"`
}

// VariantSpec is one entry of Variants. (Its switch marking, like any
// compared name's, is an entry of the switch's ECNProfiles.)
type VariantSpec struct {
	Law string            `yaml:"law" json:"law"`
	Set map[string]string `yaml:"set" json:"set,omitempty"`
	// Entry is the workload entry whose `set:` made this variant (see
	// EntryCC); "" for one the file lists.
	Entry string `yaml:"-" json:"entry,omitempty"`
	Line  int    `yaml:"-" json:"-"`
	// Settings is Set parsed for Law (lawsettings.go), in name order.
	Settings law.Settings   `yaml:"-" json:"-"`
	setLines map[string]int // Set's keys -> their lines
}

// EntryCC is the congestion control the flows of entry en use in the run
// of compared name cc: the entry's own cc if it pins one, else cc; and
// when the entry sets law parameters of its own, the variant of that law
// made for it, named "<cc>_<entry>" (registered with the law's settings,
// then the entry's).
func (e *Experiment) EntryCC(en *Entry, cc string) string {
	if en.CC != "" {
		cc = en.CC
	}
	if len(en.Set) > 0 {
		return entryVariantName(cc, en.Name)
	}
	return cc
}

func entryVariantName(cc, entry string) string { return cc + "_" + entry }

// VariantSettings is the settings a variant is registered with: the laws
// section's that apply to its law, then its own (which win).
func (e *Experiment) VariantSettings(name string) law.Settings {
	v := e.Variants[name]
	l, err := law.ParseLaw(v.Law)
	if err != nil {
		return nil
	}
	return append(e.LawSet.For(l), v.Settings...)
}

// Hosts are the TCP and offload settings applied to every host.
type Hosts struct {
	TCPTimestamps *bool      `yaml:"tcp_timestamps" json:"tcp_timestamps"`
	ECN           *bool      `yaml:"ecn" json:"ecn"`
	GSO           *bool      `yaml:"gso" json:"gso"`
	TSO           *bool      `yaml:"tso" json:"tso"`
	GRO           *bool      `yaml:"gro" json:"gro"`
	GSOMaxSize    units.Size `yaml:"gso_max_size" json:"gso_max_size"`
	// InitRwnd is the receive window every host offers from a
	// connection's start (netbuild.Options.InitRwnd); 0 the kernel's
	// 64 KB, opened as data arrives.
	InitRwnd units.Size `yaml:"init_rwnd" json:"init_rwnd,omitempty"`
	// NICQueues is how many queues a host's NIC serves round robin, each
	// flow in one of them (docs/experiments.md); 1 is one FIFO. 0 takes
	// DefaultNICQueues.
	NICQueues int `yaml:"nic_queues" json:"nic_queues"`
	// RTOMin is every host's minimum retransmission timeout (its route's
	// rto_min); 0 the kernel's 200 ms, or DefaultLosslessRTOMin on a
	// lossless fabric.
	RTOMin units.Duration `yaml:"rto_min" json:"rto_min,omitempty"`
	Line   int            `yaml:"-" json:"-"`
}

// DefaultLosslessRTOMin is the hosts' rto_min on a lossless fabric
// (docs/lossless.md, "Hosts"): a pause lasts until Xon, hundreds of
// microseconds in the papers and hundreds of milliseconds here (times
// stretch x1000), and a lossless fabric loses nothing, so a timeout there
// is spurious. Linux's 200 ms is 50 base RTTs of the 4 ms paths; 1 s is
// 250 and above the longest pause the suite's lossless runs can hold (a
// port's 640 KB drains in 51 ms at 100 Mbit/s; a chain of them in a few
// hundred).
const DefaultLosslessRTOMin = time.Second

// MaxRTOMin bounds hosts.rto_min (the kernel's TCP_RTO_MAX is 120 s).
const MaxRTOMin = 60 * time.Second

// DefaultNICQueues: a host NIC serves its flows round robin, as the
// papers' simulated NICs serve their queue pairs, so a flow's packet waits
// behind one quantum of each other busy flow, not behind their backlog.
// 16 queues: a flow shares one with others only beyond 15 at a time.
const DefaultNICQueues = 16

// MaxNICQueues bounds nic_queues (HTB classes per host port).
const MaxNICQueues = 256

// MaxGSOSize is the largest hosts.gso_max_size: an IPv4 GSO packet's
// length is a 16-bit field (the kernel's GSO_LEGACY_MAX_SIZE).
const MaxGSOSize = 65536

// MaxParallel bounds a long entry's count: parallel flows between the
// same two hosts each take a TCP source port of their own.
const MaxParallel = 65535

// MaxEntryFlows bounds the flows one workload entry may make: every flow
// is a socket pair in the run, a line of flows.csv and a flow of the
// analysis; a million is hours of this machine's time.
const MaxEntryFlows = 1_000_000

// Emulation configures the fabric's emulation (docs/fidelity.md).
type Emulation struct {
	// DelayEngine holds the links' propagation delay: auto (netem where
	// the kernel has it, else cclab's line), netem or line.
	DelayEngine string `yaml:"delay_engine" json:"delay_engine"`
	// Calibrate measures every class of path before each variant and
	// derives the laws' time constants from it (default true).
	Calibrate *bool `yaml:"calibrate" json:"calibrate"`
	// Steer hands every namespace's packet processing (RPS) to the CPUs
	// other than the delay line's (default true when a line runs).
	Steer *bool `yaml:"steer" json:"steer"`
	// UserCPU says where this process's own threads (the workload's
	// senders and receivers, the samplers, the captures) run during the
	// workload: "line" on the delay line's CPU when packet work has a
	// single CPU of its own (the default: they then never take that CPU
	// from the packets), "any" wherever the scheduler puts them.
	UserCPU string `yaml:"user_cpu" json:"user_cpu,omitempty"`
	// Strict fails the run when a variant's fidelity verdict is degraded.
	Strict bool `yaml:"strict" json:"strict"`
	Line   int  `yaml:"-" json:"-"`
}

// Capture says whether and how host ports are captured.
type Capture struct {
	Enabled *bool      `yaml:"enabled" json:"enabled"`
	Snaplen units.Size `yaml:"snaplen" json:"snaplen"`
}

// Switch turns on the tc-eBPF software switch (tcopt/) on every switch
// egress port: queue telemetry always, INT records and ECN marking on demand.
type Switch struct {
	INT          bool       `yaml:"int" json:"int"`                     // stamp INT records for the laws that read them; hosts reserve and echo them
	INTAll       bool       `yaml:"int_all" json:"int_all"`             // with int: in every compared name's run, not only the INT laws
	ECNThreshold units.Size `yaml:"ecn_threshold" json:"ecn_threshold"` // CE-mark above K bytes at dequeue; 0: off
	ECNRed       *RED       `yaml:"ecn_red" json:"ecn_red,omitempty"`   // or mark with RED's profile (not both)
	QCN          *QCN       `yaml:"qcn" json:"qcn,omitempty"`           // every port a QCN congestion point (needs int)
	TCD          *TCD       `yaml:"tcd" json:"tcd,omitempty"`           // every port judges TCD's ternary state (needs int), in every run
	// ECNProfiles give compared congestion controls (variants included)
	// a marking of their own, which replaces the three above in their runs.
	ECNProfiles map[string]ECNProfile `yaml:"ecn_profiles" json:"ecn_profiles,omitempty"`
	QueueSample units.Duration        `yaml:"queue_sample" json:"queue_sample_ns"` // queues.csv period
	// PFC makes the fabric lossless (pfc.go); nil: lossy.
	PFC  *PFC            `yaml:"pfc" json:"pfc,omitempty"`
	Line int             `yaml:"-" json:"-"`
	set  map[string]bool // the fields the file gives
}

// An ECNProfile is how the switch signals congestion in one compared
// name's run: a step at ECNThreshold (0B: no marking) or ECNRed (one of
// them), and QCN congestion points; at least one is given.
type ECNProfile struct {
	ECNThreshold units.Size `yaml:"ecn_threshold" json:"ecn_threshold"`
	ECNRed       *RED       `yaml:"ecn_red" json:"ecn_red,omitempty"`
	QCN          *QCN       `yaml:"qcn" json:"qcn,omitempty"`
	// TCD is the switch section's, whatever the profile (Profile fills it).
	TCD  *TCD            `yaml:"-" json:"-"`
	Line int             `yaml:"-" json:"-"`
	set  map[string]bool // the fields the file gives
}

// RED is a probabilistic marking profile (DCQCN's switches): with q bytes
// queued behind a packet at dequeue, no mark up to Kmin, a mark with
// probability Pmax*(q-Kmin)/(Kmax-Kmin) up to Kmax, every packet above.
// With Rate, Kmin and Kmax are for a port of that rate, and each port
// scales them by its own. Kmin and Kmax must be given; Pmax defaults to
// 0.2 (the HPCC paper's).
type RED struct {
	Kmin units.Size      `yaml:"kmin" json:"kmin"`
	Kmax units.Size      `yaml:"kmax" json:"kmax"`
	Pmax Fraction        `yaml:"pmax" json:"pmax"`
	Rate units.Rate      `yaml:"rate" json:"rate,omitempty"` // 0: the same bytes on every port
	Line int             `yaml:"-" json:"-"`
	set  map[string]bool // the fields the file gives
}

// QCN makes every switch egress port an IEEE 802.1Qau congestion point
// (tcopt/intswitch, the QCN paper's section II): about every Sample bytes
// arriving (default 150KB, randomised +-15 %) it computes
// fb = -((Q - Qeq) + 2 (Q - Qold)) and sends negative feedback, quantised
// to 6 bits, to the sender's reaction point (the qcn and qcn_t laws) in
// the INT option. With Rate, Qeq and Sample are for a port of that rate
// and each port scales them by its own. Qeq must be given (the paper's
// testbed: 64KB at 1 Gbit/s).
type QCN struct {
	Qeq    units.Size      `yaml:"qeq" json:"qeq"`
	Sample units.Size      `yaml:"sample" json:"sample"`
	Rate   units.Rate      `yaml:"rate" json:"rate,omitempty"`
	Line   int             `yaml:"-" json:"-"`
	set    map[string]bool // the fields the file gives
}

// TCD makes every switch egress port judge TCD's ternary state
// (docs/lossless.md, tcopt/intswitch): with q the bytes queued behind a
// packet, non-congestion (q <= Threshold), undetermined (q > Threshold
// and the port paused, or ON for less than MaxTon: U in the INT header,
// no CE) or congestion (CE as the run's ECN marking decides). U rides in
// the INT option (INT v1), so TCD needs int: true, and every run of the
// experiment stamps INT. Both values are required: the TCD fragment gives
// none (docs/lossless.md says how to choose them).
type TCD struct {
	MaxTon    units.Duration  `yaml:"max_ton" json:"max_ton_ns"`
	Threshold units.Size      `yaml:"threshold" json:"threshold"`
	Line      int             `yaml:"-" json:"-"`
	set       map[string]bool // the fields the file gives
}

// DefaultQCNSample is the standard's sampling interval, QCN's default.
const DefaultQCNSample = units.Size(150_000)

// DefaultREDPmax is the HPCC paper's Pmax, RED's default.
const DefaultREDPmax = Fraction(0.2)

// Profile is the switch's marking in the run of compared name cc: its
// entry in ECNProfiles, else the section's own ecn_threshold or ecn_red.
// from says which: "ecn_profiles.<cc>" or "switch".
func (sw *Switch) Profile(cc string) (p ECNProfile, from string) {
	if own, ok := sw.ECNProfiles[cc]; ok {
		own.TCD = sw.TCD
		return own, "ecn_profiles." + cc
	}
	return ECNProfile{ECNThreshold: sw.ECNThreshold, ECNRed: sw.ECNRed, QCN: sw.QCN, TCD: sw.TCD, Line: sw.Line}, "switch"
}

// An Entry is one item of the workload; exactly one of its kinds is set.
type Entry struct {
	Name string `yaml:"name" json:"name"`
	CC   string `yaml:"cc" json:"cc,omitempty"`     // pins this entry's cc, even under compare
	Tool string `yaml:"tool" json:"tool,omitempty"` // "" or "inprocess": cclab's sockets; "iperf3": real iperf3
	// Set are law parameters for this entry's flows alone (as a
	// variant's set), on top of whatever the run's law has: e.g.
	// {init_rate_kbps: 100000} starts them at 100 Mbit/s. See EntryCC.
	Set      map[string]string `yaml:"set" json:"set,omitempty"`
	Long     *Long             `yaml:"long" json:"long,omitempty"`
	Incast   *Incast           `yaml:"incast" json:"incast,omitempty"`
	Poisson  *Poisson          `yaml:"poisson" json:"poisson,omitempty"`
	Query    *Query            `yaml:"query" json:"query,omitempty"`
	Line     int               `yaml:"-" json:"line"`
	setLines map[string]int    // Set's keys -> their lines
}

// Long is one or more long-lived flows that send from Start until Stop.
type Long struct {
	Src   string         `yaml:"src" json:"src"`
	Dst   string         `yaml:"dst" json:"dst"`
	Count int            `yaml:"count" json:"count"` // parallel flows, default 1
	Start units.Duration `yaml:"start" json:"start_ns"`
	Stop  units.Duration `yaml:"stop" json:"stop_ns"`
	Line  int            `yaml:"-" json:"-"`
}

// Incast is N:1: FanIn senders (or the listed ones) each send Size to Dst.
// Starts are staggered: PerStagger flows start every Stagger from Start.
// Repeat > 1 repeats the whole incast every Every.
type Incast struct {
	Dst        string         `yaml:"dst" json:"dst"`
	Senders    []string       `yaml:"senders" json:"senders,omitempty"`
	FanIn      int            `yaml:"fan_in" json:"fan_in"`
	Size       units.Size     `yaml:"size" json:"size"`
	Start      units.Duration `yaml:"start" json:"start_ns"`
	Stagger    units.Duration `yaml:"stagger" json:"stagger_ns"`
	PerStagger int            `yaml:"per_stagger" json:"per_stagger"`
	Repeat     int            `yaml:"repeat" json:"repeat"`
	Every      units.Duration `yaml:"every" json:"every_ns"`
	Line       int            `yaml:"-" json:"-"`
}

// Poisson is background traffic: every host in Hosts starts flows with
// exponential gaps of mean 8*mean_size/(host_rate*Load), sizes drawn from
// the CDF, each to a uniformly chosen other host of the set.
type Poisson struct {
	CDF   string         `yaml:"cdf" json:"cdf"` // websearch, fb_hadoop, or a CDF file path
	Load  Fraction       `yaml:"load" json:"load"`
	Hosts []string       `yaml:"hosts" json:"hosts,omitempty"` // default: all hosts
	Start units.Duration `yaml:"start" json:"start_ns"`
	Stop  units.Duration `yaml:"stop" json:"stop_ns"`
	Line  int            `yaml:"-" json:"-"`
}

// Query is the partition/aggregate part of a websearch + incast mix:
// queries arrive as a Poisson process of Rate per second; each picks an
// aggregator and FanIn other hosts that each answer with Size bytes.
type Query struct {
	Rate  float64        `yaml:"rate" json:"rate_per_s"`
	FanIn int            `yaml:"fan_in" json:"fan_in"`
	Size  units.Size     `yaml:"size" json:"size"`
	Hosts []string       `yaml:"hosts" json:"hosts,omitempty"`
	Start units.Duration `yaml:"start" json:"start_ns"`
	Stop  units.Duration `yaml:"stop" json:"stop_ns"`
	Line  int            `yaml:"-" json:"-"`
}

// Kind names the entry's kind.
func (e *Entry) Kind() string {
	switch {
	case e.Long != nil:
		return "long"
	case e.Incast != nil:
		return "incast"
	case e.Poisson != nil:
		return "poisson"
	case e.Query != nil:
		return "query"
	}
	return ""
}

// On reports a host setting, or def when the file leaves it out.
func On(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// LawSettings returns the laws section as the laws' loaders take it
// ("name=value", "law.name=value"), in LawSet's order.
func (e *Experiment) LawSettings() []string { return e.LawSet.Strings() }

// CompareLine is the line of the i-th compared name (the file's own line
// when unknown).
func (e *Experiment) CompareLine(i int) int {
	if i < len(e.CompareLines) {
		return e.CompareLines[i]
	}
	return e.Line
}
