package rundir

// LinkChange is one link change a run's events made, as run.json records
// it under extensions.link_events (orchestrator/linkchange.Record).
type LinkChange struct {
	Target  string   `json:"target"`
	Links   []string `json:"links"` // a:b (a>b for one direction)
	Rate    string   `json:"rate,omitempty"`
	Delay   string   `json:"delay,omitempty"`
	Buffer  string   `json:"buffer,omitempty"`
	State   string   `json:"state,omitempty"`
	InForce int64    `json:"in_force_unix_ns"` // CLOCK_REALTIME
	At      int64    `json:"at_ns,omitempty"`  // when it was due, from the workload's time zero
}

// Extensions are the parts of run.json's extensions readers use.
type Extensions struct {
	LinkEvents *struct {
		Changes []LinkChange `json:"changes"`
	} `json:"link_events,omitempty"`
	// PFC is the pause controller's record of a lossless run (pfc.go).
	PFC *PFC `json:"pfc,omitempty"`
}
