package reproduce

import "cclab/analysis/report"

// The numbers the claims judge are the analysis's (analysis/report's
// measures: measures.go there); the suite keeps them in its store under
// these names.
type (
	Metric  = report.Metric
	Metrics = report.Metrics
	Sample  = report.Sample
	Samples = report.Samples
)

// values are the samples' numbers.
func values(ss []Sample) []float64 {
	out := make([]float64, len(ss))
	for i, s := range ss {
		out[i] = s.V
	}
	return out
}
