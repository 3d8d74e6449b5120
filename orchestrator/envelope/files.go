package envelope

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"cclab/analysis/plot"
)

// Files of an envelope's directory.
const (
	JSONFile = "envelope.json"
	CSVFile  = "envelope.csv"
)

// Write puts envelope.json and envelope.csv (one row per variant of every
// run) into dir.
func (e *Envelope) Write(dir string) error {
	js, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, JSONFile), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, CSVFile))
	if err != nil {
		return fmt.Errorf("envelope: %w", err)
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{string(e.Knob), "seed", "run", "cc", "faithful", "saturated_share", "cpu_queue_p99_us",
		"cpu_queue_p99_bound_us", "line_late_p99_us", "packet_softirq_share", "stolen_share"})
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	for _, r := range e.Runs {
		for _, v := range r.Variants {
			_ = w.Write([]string{g(r.Value), strconv.FormatInt(r.Seed, 10), r.ID, v.CC, strconv.FormatBool(v.Faithful),
				g(v.Saturated), g(v.CPUQueueP99), g(v.CPUQueueBound), g(v.LateP99), g(v.PacketSoftirq), g(v.Stolen)})
		}
	}
	w.Flush()
	return errors.Join(w.Error(), f.Close())
}

// Read loads an envelope.json.
func Read(path string) (*Envelope, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	var e Envelope
	if err := json.Unmarshal(data, &e); err != nil {
		return nil, fmt.Errorf("envelope: %s: %w", path, err)
	}
	return e.finish(), nil
}

// A Labeled envelope is one line of a figure (e.g. "before", "after").
type Labeled struct {
	Label string
	Env   *Envelope
}

// Figures draws, into dir, envelope-saturated.svg (the worst variant's
// saturated windows per value, against the bound) and
// envelope-cpuqueue.svg (the worst CPU queue p99, against its bound), one
// line per envelope; it returns the files' paths.
func Figures(dir, title string, envs []Labeled) ([]string, error) {
	if len(envs) == 0 {
		return nil, fmt.Errorf("envelope: nothing to draw")
	}
	knob := envs[0].Env.Knob
	xl := "WebSearch load (%)"
	if knob == FanIn {
		xl = "incast degree (senders)"
	}
	sat := plot.Chart{Title: title + ": saturated windows", XLabel: xl, YLabel: "worst variant's saturated windows (%)", YFromZero: true}
	cq := plot.Chart{Title: title + ": CPU queue", XLabel: xl, YLabel: "worst variant's CPU queue p99 (ms per RTT)", YFromZero: true}
	var bx, bs, bq []float64
	for i, le := range envs {
		var xs, ys, qs []float64
		for _, s := range le.Env.Sums {
			xs = append(xs, s.Value)
			ys = append(ys, 100*s.Saturated)
			qs = append(qs, s.CPUQueueP99/1000)
			if i == 0 {
				bx = append(bx, s.Value)
				bs = append(bs, 100*s.SaturatedBound)
				bq = append(bq, s.CPUQueueBound/1000)
			}
		}
		name := le.Label
		sat.Series = append(sat.Series, plot.Series{Name: name, X: xs, Y: ys, Marks: true, Color: i + 1})
		cq.Series = append(cq.Series, plot.Series{Name: name, X: xs, Y: qs, Marks: true, Color: i + 1})
	}
	sat.Series = append(sat.Series, plot.Series{Name: "bound", X: bx, Y: bs, Dashed: true, Color: 7})
	cq.Series = append(cq.Series, plot.Series{Name: "bound", X: bx, Y: bq, Dashed: true, Color: 7})
	var paths []string
	for name, c := range map[string]plot.Chart{"envelope-saturated.svg": sat, "envelope-cpuqueue.svg": cq} {
		img, err := plot.Render(c, "svg", 6, 3.5)
		if err != nil {
			return nil, fmt.Errorf("envelope: %s: %w", name, err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, img, 0o644); err != nil {
			return nil, fmt.Errorf("envelope: %w", err)
		}
		paths = append(paths, p)
	}
	return paths, nil
}
