package bpf

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/cilium/ebpf"

	"cclab/kmod/law"
)

// Spec returns the compiled struct_ops object of a law, named as in
// tcp_available_congestion_control. Each call returns a fresh copy that the
// caller may modify (parameters, name) before loading.
func Spec(law string) (*ebpf.CollectionSpec, error) {
	load, ok := loaders[law]
	if !ok {
		return nil, fmt.Errorf("no eBPF build of law %q", law)
	}
	spec, err := load()
	if err != nil {
		return nil, fmt.Errorf("read eBPF object of %s: %w", law, err)
	}
	return spec, nil
}

// Laws lists the laws that have an eBPF build: every law of the table
// (kmod/law/law_table.h), in id order.
func Laws() []string {
	var out []string
	for _, name := range law.Laws() {
		if _, ok := loaders[name]; ok {
			out = append(out, name)
		}
	}
	return out
}

var loaders = map[string]func() (*ebpf.CollectionSpec, error){
	"powertcp":       loadPowertcp,
	"theta_powertcp": loadTheta_powertcp,
	"hpcc":           loadHpcc,
	"swift":          loadSwift,
	"dctcp":          loadDctcp,
	"timely":         loadTimely,
	"dcqcn":          loadDcqcn,
	"qcn":            loadQcn,
	"qcn_t":          loadQcn_t,
}

// objects are the embedded objects, for Build.
var objects = map[string]*[]byte{
	"powertcp":       &_PowertcpBytes,
	"theta_powertcp": &_Theta_powertcpBytes,
	"hpcc":           &_HpccBytes,
	"swift":          &_SwiftBytes,
	"dctcp":          &_DctcpBytes,
	"timely":         &_TimelyBytes,
	"dcqcn":          &_DcqcnBytes,
	"qcn":            &_QcnBytes,
	"qcn_t":          &_Qcn_tBytes,
}

// Build identifies the law's object as this binary embeds it (a SHA-256
// of its bytes): a registration made by another build of cclab has
// another.
func Build(law string) (string, error) {
	b, ok := objects[law]
	if !ok {
		return "", fmt.Errorf("no eBPF build of law %q", law)
	}
	sum := sha256.Sum256(*b)
	return hex.EncodeToString(sum[:]), nil
}
