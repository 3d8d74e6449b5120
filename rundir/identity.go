package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Identity is what two runs must share for the difference between them to
// be their laws': the topology, the workload and the seed it was drawn
// with. The workload is the flow list the run generated (run.json
// `workload_flows`: each flow's group, hosts, size, start, stop and tool),
// with the congestion control of the flows that ran the compared one
// left out: the same experiment and seed under two laws is the same
// workload, while a flow an entry pins to another control is part of it.
type Identity struct {
	Dir        string `json:"dir"`
	Experiment string `json:"experiment"`
	Variant    string `json:"variant"`
	// Topology is the plan's name; TopologySHA256 the hash of the whole
	// plan (nodes, links, rates, buffers, delays).
	Topology       string `json:"topology"`
	TopologySHA256 string `json:"topology_sha256"`
	Seed           int64  `json:"seed"`
	// Flows counts the workload's flows; WorkloadSHA256 is the hash of
	// the flow list ("" when run.json has none: a run too old to tell).
	Flows          int    `json:"flows"`
	WorkloadSHA256 string `json:"workload_sha256"`
}

// identityJSON is the part of run.json an Identity is made of.
type identityJSON struct {
	Variant    string `json:"variant"`
	Seed       int64  `json:"seed"`
	Experiment struct {
		Name string `json:"name"`
	} `json:"experiment"`
	Topology json.RawMessage `json:"topology"`
	Flows    []workloadFlow  `json:"workload_flows"`
}

// workloadFlow is one of run.json's workload_flows.
type workloadFlow struct {
	ID    int    `json:"id"`
	Group string `json:"group"`
	Src   string `json:"src"`
	Dst   string `json:"dst"`
	Size  uint64 `json:"size"`
	Start int64  `json:"start"`
	Stop  int64  `json:"stop"`
	CC    string `json:"cc"`
	Tool  string `json:"tool,omitempty"`
}

// ReadIdentity reads the identity of the run in dir from its run.json.
func ReadIdentity(dir string) (Identity, error) {
	path := filepath.Join(dir, RunJSON)
	b, err := os.ReadFile(path)
	if err != nil {
		return Identity{}, fmt.Errorf("read %s: %w", RunJSON, err)
	}
	var rj identityJSON
	if err := json.Unmarshal(b, &rj); err != nil {
		return Identity{}, fmt.Errorf("parse %s: %w", path, err)
	}
	id := Identity{Dir: dir, Experiment: rj.Experiment.Name, Variant: rj.Variant, Seed: rj.Seed, Flows: len(rj.Flows)}
	if len(rj.Topology) > 0 && string(rj.Topology) != "null" {
		var plan struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(rj.Topology, &plan); err != nil {
			return Identity{}, fmt.Errorf("parse %s topology: %w", path, err)
		}
		id.Topology = plan.Name
		if id.TopologySHA256, err = canonicalSHA256(rj.Topology); err != nil {
			return Identity{}, fmt.Errorf("%s topology: %w", path, err)
		}
	}
	if len(rj.Flows) > 0 {
		for i := range rj.Flows {
			if rj.Flows[i].CC == rj.Variant {
				rj.Flows[i].CC = "" // the compared control: what differs on purpose
			}
		}
		b, err := json.Marshal(rj.Flows)
		if err != nil {
			return Identity{}, fmt.Errorf("%s workload: %w", path, err)
		}
		id.WorkloadSHA256 = hexSHA256(b)
	}
	return id, nil
}

// Identities reads the identity of every run in dir: dir itself, or each
// compared variant of a run directory that holds them. A directory with
// no run.json (an analysis of captures alone) has none: an error wrapping
// os.ErrNotExist.
func Identities(dir string) ([]Identity, error) {
	if IsRun(dir) {
		id, err := ReadIdentity(dir)
		if err != nil {
			return nil, err
		}
		return []Identity{id}, nil
	}
	vs, err := Variants(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if len(vs) == 0 {
		return nil, fmt.Errorf("%s: no %s here or in its variants: %w", dir, RunJSON, os.ErrNotExist)
	}
	var out []Identity
	for _, v := range vs {
		id, err := ReadIdentity(v)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// canonicalSHA256 hashes a JSON value with its object keys sorted, so that
// the same plan hashes the same whatever wrote it.
func canonicalSHA256(raw json.RawMessage) (string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	return hexSHA256(b), nil
}

func hexSHA256(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
