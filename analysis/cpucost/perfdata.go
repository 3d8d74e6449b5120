package cpucost

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
)

// ScriptFields are the fields Parse reads, as `perf script -F` takes them.
const ScriptFields = "comm,tid,cpu,time,ip,sym,dso"

// FromPerfData runs `perf script` on a perf.data taken at hz per CPU over
// seconds on a machine of cpus CPUs and classifies its samples.
func FromPerfData(ctx context.Context, path string, cpus, hz int, seconds float64) (Breakdown, error) {
	cmd := exec.CommandContext(ctx, "perf", "script", "-i", path, "-F", ScriptFields)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return Breakdown{}, fmt.Errorf("perf script %s: %w", path, err)
	}
	if err := cmd.Start(); err != nil {
		return Breakdown{}, fmt.Errorf("perf script %s: %w", path, err)
	}
	a := NewAccumulator(cpus)
	perr := Parse(out, a.Add)
	if err := cmd.Wait(); err != nil {
		return Breakdown{}, fmt.Errorf("perf script %s: %w: %s", path, err, bytes.TrimSpace(stderr.Bytes()))
	}
	if perr != nil {
		return Breakdown{}, fmt.Errorf("%s: %w", path, perr)
	}
	return a.Breakdown(hz, seconds), nil
}

// BusyShare is each CPU's share of time not idle.
func (b Breakdown) BusyShare() []float64 {
	busy := make([]float64, b.CPUs)
	for _, r := range b.Rows {
		if r.Stage == StageIdle {
			continue
		}
		for i, s := range r.Share {
			busy[i] += s
		}
	}
	return busy
}

// WriteFiles writes the breakdown as JSON and as the text table.
func (b Breakdown) WriteFiles(jsonPath, textPath string) error {
	js, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(jsonPath, append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", jsonPath, err)
	}
	var txt bytes.Buffer
	if err := b.Write(&txt); err != nil {
		return err
	}
	if err := os.WriteFile(textPath, txt.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", textPath, err)
	}
	return nil
}
