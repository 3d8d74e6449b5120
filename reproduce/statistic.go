package reproduce

import (
	"fmt"
	"strconv"
	"strings"

	"cclab/analysis/stats"
)

// statistic is what a claim takes over its samples: a percentile of the
// pooled flows of every faithful run, or the mean or median over the
// faithful runs.
type statistic struct {
	kind string  // "percentile", "mean" or "median"
	p    float64 // the percentile, in percent
}

// percentiles are the percentiles a claim may take: the papers' p99.9
// and p99, and the lower ones a smaller pool of flows supports.
var percentiles = []string{"p50", "p90", "p95", "p99", "p99.9"}

func parseStatistic(s string) (statistic, error) {
	switch s {
	case "mean", "median":
		return statistic{kind: s}, nil
	}
	for _, p := range percentiles {
		if s == p {
			x, _ := strconv.ParseFloat(strings.TrimPrefix(s, "p"), 64)
			return statistic{kind: "percentile", p: x}, nil
		}
	}
	return statistic{}, fmt.Errorf("%q: one of %s, mean, median", s, strings.Join(percentiles, ", "))
}

func (s statistic) percentile() bool { return s.kind == "percentile" }

// minN is the fewest samples the statistic needs: for a percentile, the
// flows for it to be more than the largest (p99.9: 1000); for a median
// over runs, the runs for a 95 % interval to exist at all (6); for a
// mean, three runs (two give a spread from a single difference).
func (s statistic) minN() int {
	switch s.kind {
	case "percentile":
		return stats.MinFlows(s.p)
	case "median":
		for n := 1; ; n++ {
			if lo, hi := stats.PercentileRanks(n, 50, stats.Conf); lo >= 1 && hi <= n {
				return n
			}
		}
	}
	return 3
}

func (s statistic) unitOfN() string {
	if s.percentile() {
		return "flows"
	}
	return "runs"
}

func (s statistic) String() string {
	if s.percentile() {
		return "p" + strconv.FormatFloat(s.p, 'f', -1, 64)
	}
	return s.kind
}
