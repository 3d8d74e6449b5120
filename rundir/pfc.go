package rundir

// PFC is what readers take of run.json's extensions.pfc, the pause
// controller's record of a lossless run (docs/lossless.md): its
// thresholds and, per run and per port, the pauses it applied. Absent
// (nil) in a lossy run.
type PFC struct {
	Mode          string  `json:"mode"` // static or dynamic
	XoffBytes     int64   `json:"xoff_bytes"`
	XonBytes      int64   `json:"xon_bytes"`
	HeadroomBytes int64   `json:"headroom_bytes"`
	Alpha         float64 `json:"alpha"`
	BufferBytes   int64   `json:"buffer_bytes"`
	// Pauses are the pause events applied (Xoff crossings that paused an
	// upstream port); PausedNs their summed duration.
	Pauses         int64 `json:"pauses"`
	PausedNs       int64 `json:"paused_ns"`
	LongestPauseNs int64 `json:"longest_pause_ns"`
	// MaxSpreadHops is how far pauses spread: 1 when a congested switch
	// paused its direct upstream, 2 when that upstream paused its own, ...
	MaxSpreadHops int   `json:"max_spread_hops"`
	Events        int64 `json:"events"`
	// LostEvents are crossings the controller never saw (its ring
	// buffer overflowed): the counts above miss them.
	LostEvents int64 `json:"lost_events"`
	// LogDropped are changes applied beyond the controller's log: pfc.csv
	// and the counts miss them.
	LogDropped int64     `json:"log_dropped,omitempty"`
	Ports      []PFCPort `json:"ports"`
}

// PFCPort is one paused port's record: the port (node, interface) whose
// queue was stopped, and the peer that asked for it.
type PFCPort struct {
	Node           string `json:"node"`
	Iface          string `json:"iface"`
	PeerNode       string `json:"peer_node"`
	PeerIface      string `json:"peer_iface"`
	Host           bool   `json:"host"` // a host's NIC queue
	Pauses         int64  `json:"pauses"`
	PausedNs       int64  `json:"paused_ns"`
	LongestPauseNs int64  `json:"longest_pause_ns"`
	MaxSpreadHops  int    `json:"max_spread_hops"`
}
