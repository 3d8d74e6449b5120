package main

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"cclab/kmod/law"
)

func runCclab(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func TestLawReplayCommand(t *testing.T) {
	out, err := runCclab(t, "law", "replay", "--law", "hpcc", "max_cwnd_bytes=1048576", "../../kmod/law/testdata/hpcc_2hop.csv")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Header, the init step, two ACKs; the last is the hand-checked one.
	if len(lines) != 4 || lines[3] != "7,20000,2896,9146,6253,5,125060000,220000,rtt|inc|ai" {
		t.Fatalf("replay output:\n%s", out)
	}

	out, err = runCclab(t, "law", "replay", "--law", "swift", "fs_range_ns=0", "base_target_ns=5000", "--json", "../../kmod/law/testdata/swift_delay.csv")
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Law    string
		Params []struct {
			Name  string
			Value uint64
		}
		Steps []struct {
			CwndBytes uint64 `json:"cwnd_bytes"`
			Trace     string
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if res.Law != "swift" || len(res.Steps) != 6 || res.Steps[1].CwndBytes != 3750 || !strings.Contains(res.Steps[1].Trace, "dec") {
		t.Errorf("json result %+v", res)
	}
	var fsRange = uint64(1)
	for _, p := range res.Params {
		if p.Name == "fs_range_ns" {
			fsRange = p.Value
		}
	}
	if fsRange != 0 {
		t.Errorf("params echo fs_range_ns=%d, want the 0 given", fsRange)
	}
}

func TestLawReplayErrors(t *testing.T) {
	cases := [][]string{
		{"law", "replay", "--law", "cubic", "x.csv"},
		{"law", "replay", "--law", "hpcc", "eta_ppm=2", "../../kmod/law/testdata/hpcc_2hop.csv"},
		{"law", "replay", "--law", "hpcc", "nosuch=1", "../../kmod/law/testdata/hpcc_2hop.csv"},
		{"law", "replay", "--law", "hpcc", "/nonexistent/trace.csv"},
		{"law", "replay", "--law", "hpcc", "eta_ppm=900000"},
		{"law", "replay", "../../kmod/law/testdata/hpcc_2hop.csv"},
		{"law", "params", "--law", "dctcp", "g_shift=99"},
	}
	for _, args := range cases {
		if out, err := runCclab(t, args...); err == nil {
			t.Errorf("%v accepted:\n%s", args, out)
		}
	}
	out, err := runCclab(t, "law", "params", "--law", "dctcp", "g_shift=3")
	if err != nil || !regexp.MustCompile(`(?m)^g_shift +3 +shift +4 +0\.\.16 `).MatchString(out) {
		t.Errorf("params: %v\n%s", err, out)
	}
	out, err = runCclab(t, "law", "params", "--law", "swift", "--json", "ai_bytes=2000")
	var doc struct {
		Law    string `json:"law"`
		Params []struct {
			Name    string `json:"name"`
			Value   uint64 `json:"value"`
			Default uint64 `json:"default"`
		} `json:"params"`
	}
	if err != nil || json.Unmarshal([]byte(out), &doc) != nil || doc.Law != "swift" {
		t.Fatalf("params --json: %v\n%s", err, out)
	}
	found := false
	for _, q := range doc.Params {
		if q.Name == "ai_bytes" {
			found = q.Value == 2000 && q.Default == 1448
		}
	}
	if !found {
		t.Errorf("params --json: ai_bytes not 2000 (default 1448):\n%s", out)
	}
	out, err = runCclab(t, "law", "params", "--markdown")
	if err != nil || strings.Count(out, "| parameter | unit | default | range | meaning |") != len(law.Laws()) {
		t.Errorf("params --markdown: %v\n%s", err, out)
	}
}
