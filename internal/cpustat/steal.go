package cpustat

import "time"

// StealMark remembers the hypervisor's stolen time per CPU at one moment,
// so that a timing measurement can tell afterwards whether the machine was
// its own while it ran (a timing test that fails on a machine whose CPUs
// were taken away has measured the machine, not the code).
type StealMark struct {
	at  time.Time
	per []Times
}

// MarkSteal reads the stolen time now.
func MarkSteal() (StealMark, error) {
	_, per, err := Read()
	return StealMark{at: time.Now(), per: per}, err
}

// Steal is the stolen time since a mark.
type Steal struct {
	// Window is the time since the mark.
	Window time.Duration
	// Share is the share of all CPUs' time stolen, Worst the largest share
	// of one CPU's.
	Share, Worst float64
}

// Since reports the stolen time since the mark.
func (m StealMark) Since() (Steal, error) {
	_, per, err := Read()
	if err != nil {
		return Steal{}, err
	}
	st := Steal{Window: time.Since(m.at)}
	var a, b Times
	for i := range min(len(per), len(m.per)) {
		st.Worst = max(st.Worst, StealShare(m.per[i], per[i]))
		a, b = a.Add(m.per[i]), b.Add(per[i])
	}
	st.Share = StealShare(a, b)
	return st, nil
}
