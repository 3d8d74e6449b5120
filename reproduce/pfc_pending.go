package reproduce

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"cclab/orchestrator/experiment"
)

// The lossless experiments (switch: {pfc: ...}) were written before the
// PFC controller that runs them: until it is built, experiment.Parse
// refuses their pfc section, and only that. The suite still checks
// everything else of such a file, claims included, on a copy without
// the section, and leaves the file out of the suite (it cannot run).
// Once the refusal is gone these files load as every other; this file
// can then go.

// pfcRefusal is the one error experiment.Parse gives a lossless file
// while the controller is not built (orchestrator/experiment/pfc.go).
const pfcRefusal = "the PFC controller is not built yet"

// waitsForPFC reports whether err is that refusal alone.
func waitsForPFC(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, pfcRefusal) && !strings.Contains(msg, "\n")
}

// checkWithoutPFC checks a lossless file's other parts: the file parsed
// again without switch.pfc, then its reproduce block.
func checkWithoutPFC(path string, src []byte) error {
	stripped, err := withoutPFC(src)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	x, err := experiment.Parse(path, stripped)
	if err != nil {
		return err
	}
	if x.Reproduce.Kind == 0 {
		return nil
	}
	_, err = fromExperiment(x, filepath.Base(path))
	if err != nil {
		return prefixLines(path, err)
	}
	return nil
}

// withoutPFC is the file's text with the switch section's pfc entry
// blanked (its lines emptied, so every other line keeps its number and
// the errors their file:line). The entry must have lines of its own.
func withoutPFC(src []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("not a mapping")
	}
	lines := strings.Split(string(src), "\n")
	root := doc.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		sw := root.Content[i+1]
		if root.Content[i].Value != "switch" || sw.Kind != yaml.MappingNode {
			continue
		}
		// The entry runs to the next key of the section, else of the file.
		end := len(lines) + 1
		if i+2 < len(root.Content) {
			end = root.Content[i+2].Line
		}
		for j := 0; j+1 < len(sw.Content); j += 2 {
			if sw.Content[j].Value != "pfc" {
				continue
			}
			from := sw.Content[j].Line
			if j+2 < len(sw.Content) {
				end = sw.Content[j+2].Line
			}
			if from == root.Content[i].Line || end == from {
				return nil, fmt.Errorf("line %d: switch pfc shares its line with another key: give it lines of its own", from)
			}
			for l := from; l < end && l <= len(lines); l++ {
				lines[l-1] = ""
			}
			break
		}
	}
	return []byte(strings.Join(lines, "\n")), nil
}

// WaitingForPFC names the suite's files (their stems) that Load leaves out
// because they ask for PFC, which cannot run yet: for --list.
func WaitingForPFC(root string) ([]string, error) {
	paths, err := filepath.Glob(filepath.Join(root, Dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, p := range paths {
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if _, err := experiment.Parse(p, src); err != nil && waitsForPFC(err) {
			out = append(out, strings.TrimSuffix(filepath.Base(p), ".yaml"))
		}
	}
	return out, nil
}
