package envelope

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cclab/internal/runid"
	"cclab/orchestrator/runner"
)

// Options say what to vary and how often.
type Options struct {
	File   string    // the experiment file
	Knob   Knob      // load or fan_in
	Values []float64 // the knob's values, in order
	Runs   int       // runs per value (seeds Seed, Seed+1, ...)
	Seed   int64
	Out    string    // the envelope's directory: run directories, files, figures
	Log    io.Writer // progress
	// Versions go into every run's run.json, as `cclab run` records them.
	Versions map[string]string
}

// A Variant is one variant of one run: its verdict and what the CPU
// checks measured against their bounds.
type Variant struct {
	CC       string   `json:"cc"`
	Faithful bool     `json:"faithful"`
	Reasons  []string `json:"reasons,omitempty"`
	// Saturated windows (share) and its bound; the CPU queue's p99 per
	// round trip (us) and its bound; the line's p99 lateness (us) and its
	// bound; the packet CPUs' softirq share; stolen time.
	Saturated      float64 `json:"saturated_share"`
	SaturatedBound float64 `json:"saturated_bound"`
	CPUQueueP99    float64 `json:"cpu_queue_p99_us"`
	CPUQueueBound  float64 `json:"cpu_queue_p99_bound_us"`
	LateP99        float64 `json:"line_late_p99_us"`
	LateBound      float64 `json:"line_late_p99_bound_us"`
	PacketSoftirq  float64 `json:"packet_softirq_share"`
	Stolen         float64 `json:"stolen_share"`
	Dir            string  `json:"dir"`
}

// A Run is one run at one value of the knob.
type Run struct {
	Value    float64   `json:"value"`
	Seed     int64     `json:"seed"`
	ID       string    `json:"id"`
	Variants []Variant `json:"variants"`
}

// Faithful: every variant of the run was.
func (r Run) Faithful() bool {
	for _, v := range r.Variants {
		if !v.Faithful {
			return false
		}
	}
	return len(r.Variants) > 0
}

// Envelope is every run, and the edge they give.
type Envelope struct {
	File string `json:"file"`
	Knob Knob   `json:"knob"`
	Runs []Run  `json:"runs"`
	Sums []Sum  `json:"values"`
	// Edge is the highest value up to which every run of every value was
	// faithful; HasEdge is false when the first value already was not.
	Edge    float64 `json:"edge"`
	HasEdge bool    `json:"has_edge"`
}

// Measure runs the experiment Runs times at each value and judges each
// run by its variants' verdicts. A run that fails to run at all ends the
// measurement with its error; what ran is returned with it.
func Measure(ctx context.Context, opt Options) (*Envelope, error) {
	if opt.Runs < 1 || len(opt.Values) == 0 {
		return nil, fmt.Errorf("envelope: at least one value and one run")
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	specs := filepath.Join(opt.Out, "experiments")
	if err := os.MkdirAll(specs, 0o755); err != nil {
		return nil, fmt.Errorf("envelope: %w", err)
	}
	env := &Envelope{File: opt.File, Knob: opt.Knob}
	// Every file is written and prepared before the first run: a bad
	// value fails before anything is built.
	prepared := make([][]*runner.Prepared, len(opt.Values))
	for i, v := range opt.Values {
		for k := 0; k < opt.Runs; k++ {
			path, err := vary(opt.File, specs, opt.Knob, v, opt.Seed+int64(k))
			if err != nil {
				return nil, err
			}
			p, err := runner.Prepare(path)
			if err != nil {
				return nil, fmt.Errorf("envelope: %s %s: %w", opt.Knob, opt.Knob.Format(v), err)
			}
			prepared[i] = append(prepared[i], p)
		}
	}
	total, done := len(opt.Values)*opt.Runs, 0
	for i, v := range opt.Values {
		for k, p := range prepared[i] {
			if err := ctx.Err(); err != nil {
				return env.finish(), err
			}
			done++
			id := runid.New()
			fmt.Fprintf(opt.Log, "envelope: %s %s, run %d of %d (seed %d), %d of %d: run %s\n",
				opt.Knob, opt.Knob.Format(v), k+1, opt.Runs, opt.Seed+int64(k), done, total, id)
			res, err := runner.Run(ctx, p, runner.Options{Out: filepath.Join(opt.Out, "runs"), ID: id,
				Log: io.Discard, Versions: opt.Versions})
			if err != nil {
				return env.finish(), fmt.Errorf("envelope: %s %s run %d: %w", opt.Knob, opt.Knob.Format(v), k+1, err)
			}
			run := Run{Value: v, Seed: opt.Seed + int64(k), ID: string(id)}
			for _, s := range res.Runs {
				vr, err := readVariant(s.Dir)
				if err != nil {
					return env.finish(), err
				}
				vr.CC = s.CC
				run.Variants = append(run.Variants, vr)
			}
			env.Runs = append(env.Runs, run)
			verdict := "faithful"
			if !run.Faithful() {
				verdict = "degraded"
			}
			fmt.Fprintf(opt.Log, "envelope: %s %s run %d: %s\n", opt.Knob, opt.Knob.Format(v), k+1, verdict)
		}
	}
	return env.finish(), nil
}

// readVariant reads a variant's verdict and CPU checks from its run.json.
func readVariant(dir string) (Variant, error) {
	data, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		return Variant{}, fmt.Errorf("envelope: %w", err)
	}
	var rj struct {
		Fidelity struct {
			Verdict string   `json:"verdict"`
			Reasons []string `json:"reasons"`
			Checks  []struct {
				Name  string  `json:"name"`
				Value float64 `json:"value"`
				Limit float64 `json:"limit"`
			} `json:"checks"`
		} `json:"fidelity"`
		Health struct {
			CPU struct {
				Saturated float64 `json:"saturated_share"`
				Softirq   float64 `json:"packet_softirq_share"`
				Stolen    float64 `json:"stolen_share"`
			} `json:"cpu"`
		} `json:"health"`
	}
	if err := json.Unmarshal(data, &rj); err != nil {
		return Variant{}, fmt.Errorf("envelope: %s: %w", dir, err)
	}
	v := Variant{Faithful: rj.Fidelity.Verdict == "faithful", Reasons: rj.Fidelity.Reasons,
		Saturated: rj.Health.CPU.Saturated, PacketSoftirq: rj.Health.CPU.Softirq, Stolen: rj.Health.CPU.Stolen, Dir: dir}
	for _, c := range rj.Fidelity.Checks {
		switch c.Name {
		case "CPU saturation":
			v.SaturatedBound = c.Limit
		case "CPU queue p99":
			v.CPUQueueP99, v.CPUQueueBound = c.Value, c.Limit
		case "delay line p99 lateness":
			v.LateP99, v.LateBound = c.Value, c.Limit
		}
	}
	return v, nil
}
