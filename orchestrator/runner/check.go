package runner

import (
	"cclab/kmod/lawload"
)

// Check validates an experiment file as Prepare does, its topology and
// every variant's flows, without the kernel: nothing is loaded, built or
// written, and tcp_available_congestion_control is not read. Every name
// cclab knows (its laws, the kernel's own congestion controls, the file's
// variants) counts as present, so the file is judged, not the machine;
// the law settings were checked against the law table when the file was
// parsed (experiment.Parse).
func Check(path string) (*Prepared, error) {
	p, err := read(path)
	if err != nil {
		return nil, err
	}
	known := map[string]bool{}
	for _, cc := range append(lawload.Laws(), lawload.KernelCCs()...) {
		known[cc] = true
	}
	if err := p.generate(known); err != nil {
		return nil, err
	}
	return p, nil
}
