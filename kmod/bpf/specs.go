package bpf

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"

	"github.com/cilium/ebpf"

	"cclab/kmod/law"
)

// objects are the compiled struct_ops objects, <law>_bpfel.o: a law of the
// table has an eBPF build when its object is here.
//
//go:embed *_bpfel.o
var objects embed.FS

// object returns the bytes of a law's object as this binary embeds them.
func object(law string) ([]byte, error) {
	b, err := objects.ReadFile(law + "_bpfel.o")
	if err != nil {
		return nil, fmt.Errorf("no eBPF build of law %q: %w", law, err)
	}
	return b, nil
}

// Spec returns the compiled struct_ops object of a law, named as in
// tcp_available_congestion_control. Each call returns a fresh copy that the
// caller may modify (parameters, name) before loading.
func Spec(law string) (*ebpf.CollectionSpec, error) {
	b, err := object(law)
	if err != nil {
		return nil, err
	}
	spec, err := ebpf.LoadCollectionSpecFromReader(bytes.NewReader(b))
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
		if _, err := fs.Stat(objects, name+"_bpfel.o"); err == nil {
			out = append(out, name)
		}
	}
	return out
}

// Build identifies the law's object as this binary embeds it (a SHA-256
// of its bytes): a registration made by another build of cclab has
// another.
func Build(law string) (string, error) {
	b, err := object(law)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
