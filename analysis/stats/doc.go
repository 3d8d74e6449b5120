// Package stats holds the statistics a results page uses to state a claim
// with its confidence interval: distribution-free intervals for nearest-rank
// percentiles (the definition of package metrics), medians of censored
// times to an event (Kaplan-Meier), Student-t intervals for means, and a
// reproducible bootstrap, chiefly the paired two-level bootstrap of the
// ratio of two laws' statistics over seeds and flows.
//
// Conventions: NaN is a missing value and is dropped; +Inf is a censored
// observation (a flow that never completed) and sorts last, so it can be
// an order statistic and a bound. An interval side the data cannot bound
// is -Inf or +Inf.
package stats
