package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Outputs lists the files Write creates, relative to its directory.
type Outputs struct {
	Dir   string   `json:"dir"`
	Files []string `json:"files"`
}

// Write puts the analysis in dir: summary.json, one CSV per table, every
// figure as PNG and SVG under figures/, report.md and report.html. Files
// are written to a temporary name and renamed, so a failed write leaves no
// half file behind.
func Write(a *Analysis, dir string) (*Outputs, error) {
	if err := os.MkdirAll(filepath.Join(dir, "figures"), 0o755); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	out := &Outputs{Dir: dir}
	put := func(name string, b []byte) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p+".tmp", b, 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		if err := os.Rename(p+".tmp", p); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
		out.Files = append(out.Files, name)
		return nil
	}
	js, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode summary: %w", err)
	}
	if err := put("summary.json", append(js, '\n')); err != nil {
		return nil, err
	}
	tables := map[string]Table{
		"flows.csv": a.FlowTable(), "slowdown_fixed_bins.csv": a.BinTable(false), "slowdown_equal_bins.csv": a.BinTable(true),
		"slowdown_classes.csv": a.ClassTable(), "fairness.csv": a.FairnessTable(), "jain.csv": a.JainTable(),
		"convergence.csv": a.ConvergenceTable(), "throughput.csv": a.ThroughputTable(), "links.csv": a.LinkTable(),
		"queues_summary.csv": a.QueueTable(), "mismatches.csv": a.MismatchTable(), "measures.csv": a.MeasureTable(),
		"int_summary.csv": a.INTTable(), "int_queues.csv": a.INTSeriesTable(),
	}
	for _, name := range sortedKeys(tables) {
		p := filepath.Join(dir, name)
		if err := writeFileAtomic(p, tables[name].WriteCSV); err != nil {
			return nil, err
		}
		out.Files = append(out.Files, name)
	}
	figs, err := a.Figures()
	if err != nil {
		return nil, err
	}
	// A figure without data this time must not survive from an earlier
	// analysis into this one's directory.
	for _, n := range figureNames {
		for _, ext := range []string{".png", ".svg"} {
			if err := os.Remove(filepath.Join(dir, "figures", n+ext)); err != nil && !os.IsNotExist(err) {
				return nil, fmt.Errorf("remove stale figure: %w", err)
			}
		}
	}
	for _, f := range figs {
		if err := put(filepath.Join("figures", f.Name+".png"), f.PNG); err != nil {
			return nil, err
		}
		if err := put(filepath.Join("figures", f.Name+".svg"), f.SVG); err != nil {
			return nil, err
		}
	}
	if err := put("report.md", a.Markdown(figs)); err != nil {
		return nil, err
	}
	if err := put("report.html", a.HTML(figs)); err != nil {
		return nil, err
	}
	return out, nil
}

// WriteCSV writes the table with its header.
func (t Table) WriteCSV(out io.Writer) error {
	w := csv.NewWriter(out)
	emit := func(r []string) error { return w.Write(r) }
	if err := emit(t.Header); err != nil {
		return err
	}
	for _, r := range t.Rows {
		if err := emit(r); err != nil {
			return err
		}
	}
	if t.Stream != nil {
		if err := t.Stream(emit); err != nil {
			return fmt.Errorf("table %s: %w", t.Title, err)
		}
	}
	w.Flush()
	return w.Error()
}

// CSV renders the table with its header.
func (t Table) CSV() ([]byte, error) {
	var b bytes.Buffer
	err := t.WriteCSV(&b)
	return b.Bytes(), err
}

// writeFileAtomic writes through fill into a temporary file and renames it.
func writeFileAtomic(path string, fill func(io.Writer) error) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path + ".tmp")
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(path+".tmp", path)
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	for i := 1; i < len(ks); i++ {
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}
