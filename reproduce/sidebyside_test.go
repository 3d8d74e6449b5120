package reproduce

import (
	"math"
	"testing"
	"time"

	"cclab/analysis/metrics"
	"cclab/analysis/report"
	"cclab/analysis/series"
)

// A queue claim's figure puts the paper's level in the series' unit: KB
// as it is, BDPs through the run's own BDP (rate x base RTT); a drain
// claim puts the paper's time that many base RTTs after the burst starts;
// a metric without a series of its own draws nothing.
func TestClaimSeries(t *testing.T) {
	q := series.Queue{Samples: []metrics.Point{{T: 10 * time.Millisecond, V: 0}, {T: 11 * time.Millisecond, V: 300e3}, {T: 20 * time.Millisecond, V: 0}}}
	a := &report.Analysis{
		Queues: []series.Queue{q},
		Flows:  []report.Flow{{ID: "1", Group: "incast", Start: 10e6, End: 30e6, Complete: true, BaseRTT: 4 * time.Millisecond}},
	}
	v := report.NewMeasureView(a, 100e6) // BDP 50 KB
	for _, c := range []struct {
		metric string
		paper  float64
		level  float64
		at     time.Duration
		ok     bool
	}{
		{"queue_peak", 550e3, 550, -1, true},
		{"queue_peak_bdps", 7, 350, -1, true},
		{"drain_rtts", 5, math.NaN(), 30 * time.Millisecond, true},
		{"short_p999", 0.91, math.NaN(), -1, false},
	} {
		s, ok := claimSeries(v, "incast", c.metric, c.paper)
		if ok != c.ok {
			t.Errorf("%s: drawn %v, want %v", c.metric, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		if math.Abs(s.level-c.level) > 1e-9 && !(math.IsNaN(s.level) && math.IsNaN(c.level)) {
			t.Errorf("%s: paper's level %v KB, want %v", c.metric, s.level, c.level)
		}
		if s.at != c.at {
			t.Errorf("%s: paper's time %v, want %v", c.metric, s.at, c.at)
		}
		if len(s.series) != 3 || s.series[1].V != 300 {
			t.Errorf("%s: series %v, want the queue in KB", c.metric, s.series)
		}
	}
}
