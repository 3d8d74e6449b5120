// Package kubecheck holds the test that decodes the Kubernetes Job a
// sweep plan writes (job.yaml) strictly into the k8s.io/api types and
// checks it against the API server's rules for the fields it uses. It is
// a module of its own so that k8s.io/api stays out of cclab's build; no
// Kubernetes can run on the project's machines (docs/scale-out.md).
package kubecheck
