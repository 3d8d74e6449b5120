package envelope

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v3"
)

// A Knob is what the envelope varies: the `load` of every poisson entry
// (a percentage) or the `fan_in` of every incast entry.
type Knob string

const (
	Load  Knob = "load"
	FanIn Knob = "fan_in"
)

// entryKind is the workload entry kind a knob lives in.
func (k Knob) entryKind() (string, error) {
	switch k {
	case Load:
		return "poisson", nil
	case FanIn:
		return "incast", nil
	}
	return "", fmt.Errorf("envelope: no knob %q (load or fan_in)", k)
}

// Format is a knob's value as the experiment file writes it.
func (k Knob) Format(v float64) string {
	if k == Load {
		return strconv.FormatFloat(v, 'f', -1, 64) + "%"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// vary writes a copy of the experiment file src into dir with every
// entry of the knob's kind set to v, the topology made absolute (the copy
// lives elsewhere) and the seed set; it returns the copy's path. An
// experiment with no entry of that kind is an error.
func vary(src, dir string, k Knob, v float64, seed int64) (string, error) {
	kind, err := k.entryKind()
	if err != nil {
		return "", err
	}
	data, err := os.ReadFile(src)
	if err != nil {
		return "", fmt.Errorf("envelope: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("envelope: %s: %w", src, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return "", fmt.Errorf("envelope: %s is not a mapping", src)
	}
	top := doc.Content[0]
	set := func(m *yaml.Node, key, val string, tag string) {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				m.Content[i+1] = &yaml.Node{Kind: yaml.ScalarNode, Value: val, Tag: tag}
				return
			}
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key},
			&yaml.Node{Kind: yaml.ScalarNode, Value: val, Tag: tag})
	}
	get := func(m *yaml.Node, key string) *yaml.Node {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == key {
				return m.Content[i+1]
			}
		}
		return nil
	}
	if t := get(top, "topology"); t != nil && !filepath.IsAbs(t.Value) {
		abs, err := filepath.Abs(filepath.Join(filepath.Dir(src), t.Value))
		if err != nil {
			return "", fmt.Errorf("envelope: %w", err)
		}
		set(top, "topology", abs, "!!str")
	}
	set(top, "seed", strconv.FormatInt(seed, 10), "!!int")
	n := 0
	if wl := get(top, "workload"); wl != nil && wl.Kind == yaml.SequenceNode {
		for _, e := range wl.Content {
			if body := get(e, kind); body != nil && body.Kind == yaml.MappingNode {
				tag := "!!str" // "20%"
				if k == FanIn {
					tag = "!!int"
				}
				set(body, string(k), k.Format(v), tag)
				n++
			}
		}
	}
	if n == 0 {
		return "", fmt.Errorf("envelope: %s has no %s entry to set %s in", src, kind, k)
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return "", fmt.Errorf("envelope: %w", err)
	}
	path := filepath.Join(dir, fmt.Sprintf("%s-%s-seed%d.yaml", k, k.Format(v), seed))
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return "", fmt.Errorf("envelope: %w", err)
	}
	return path, nil
}
