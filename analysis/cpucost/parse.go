package cpucost

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// A Frame is one entry of a sample's call chain, leaf first.
type Frame struct {
	Sym  string
	User bool // in a user-space object (not [kernel.kallsyms] nor a BPF program)
}

// A Sample is one perf sample: who ran, on which CPU, and its call chain.
type Sample struct {
	Comm   string
	TID    int
	CPU    int
	TimeS  float64 // perf's clock, seconds
	Frames []Frame
}

// Parse reads `perf script -F comm,tid,cpu,time,ip,sym,dso` output: a
// header line per sample ("comm tid [cpu] time:") followed by its frames
// ("addr sym (dso)"), samples separated by blank lines. Lines it cannot
// read are an error with their line number.
func Parse(r io.Reader, each func(Sample)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var cur *Sample
	flush := func() {
		if cur != nil {
			each(*cur)
			cur = nil
		}
	}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		if line[0] == '\t' || line[0] == ' ' {
			if cur == nil {
				return fmt.Errorf("perf script line %d: a frame outside a sample", n)
			}
			cur.Frames = append(cur.Frames, parseFrame(strings.TrimSpace(line)))
			continue
		}
		flush()
		s, err := parseHeader(line)
		if err != nil {
			return fmt.Errorf("perf script line %d: %w", n, err)
		}
		cur = &s
	}
	flush()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("perf script: %w", err)
	}
	return nil
}

// parseHeader reads "comm tid [cpu] time:"; comm may hold spaces.
func parseHeader(line string) (Sample, error) {
	open := strings.LastIndex(line, " [")
	close := strings.LastIndex(line, "] ")
	if open < 0 || close < open {
		return Sample{}, fmt.Errorf("no [cpu] in sample header %q", line)
	}
	left := strings.Fields(line[:open])
	if len(left) < 2 {
		return Sample{}, fmt.Errorf("no comm and tid in sample header %q", line)
	}
	tid, err := strconv.Atoi(left[len(left)-1])
	if err != nil {
		return Sample{}, fmt.Errorf("tid in sample header %q: %w", line, err)
	}
	cpu, err := strconv.Atoi(line[open+2 : close])
	if err != nil {
		return Sample{}, fmt.Errorf("cpu in sample header %q: %w", line, err)
	}
	ts := strings.TrimSuffix(strings.TrimSpace(line[close+2:]), ":")
	t, err := strconv.ParseFloat(ts, 64)
	if err != nil {
		return Sample{}, fmt.Errorf("time in sample header %q: %w", line, err)
	}
	return Sample{Comm: strings.Join(left[:len(left)-1], " "), TID: tid, CPU: cpu, TimeS: t}, nil
}

// parseFrame reads "addr sym (dso)"; sym may be [unknown] or carry
// +offset.
func parseFrame(s string) Frame {
	dso := ""
	if i := strings.LastIndex(s, " ("); i >= 0 && strings.HasSuffix(s, ")") {
		dso = s[i+2 : len(s)-1]
		s = s[:i]
	}
	if i := strings.IndexByte(s, ' '); i >= 0 {
		s = s[i+1:]
	} else {
		s = ""
	}
	if i := strings.LastIndex(s, "+0x"); i > 0 {
		s = s[:i]
	}
	kernel := dso == "[kernel.kallsyms]" || strings.HasPrefix(dso, "bpf_prog_") || strings.HasPrefix(s, "bpf_prog_") || dso == "[bpf_prog]"
	return Frame{Sym: s, User: !kernel}
}
