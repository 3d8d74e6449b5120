package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"cclab/internal/runid"
	"cclab/tcopt/agent"
)

// TestIntStats: `cclab int stats` finds a live agent through its pins and
// prints its counters, as JSON and as a table.
func TestIntStats(t *testing.T) {
	id := runid.New()
	a, err := agent.Attach(context.Background(), id, agent.Options{EchoPinDir: filepath.Join(id.BPFDir(), "cc")})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()

	run := func(args ...string) string {
		root := newRootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.ExecuteContext(context.Background()); err != nil {
			t.Fatalf("cclab %s: %v", strings.Join(args, " "), err)
		}
		return out.String()
	}
	var got map[string]agent.Stats
	if err := json.Unmarshal([]byte(run("int", "stats", "--json")), &got); err != nil {
		t.Fatal(err)
	}
	if st, ok := got[string(id)]; !ok || st != (agent.Stats{}) {
		t.Fatalf("int stats --json = %v, want run %s with zero counters", got, id)
	}
	if out := run("int", "stats", "--run", string(id)); !strings.Contains(out, string(id)) || !strings.Contains(out, "echoes parsed") {
		t.Fatalf("int stats --run %s printed %q", id, out)
	}
	root := newRootCmd()
	root.SetArgs([]string{"int", "stats", "--run", "NOT-AN-ID"})
	root.SetOut(&bytes.Buffer{})
	if err := root.ExecuteContext(context.Background()); err == nil {
		t.Fatal("int stats accepted a bad run id")
	}
}
