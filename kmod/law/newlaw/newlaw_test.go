package newlaw

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The template law and its rows in the tests that take one per law.
const (
	name      = "reno_int"
	row       = `X(%d, reno_int, RENO_INT, "qlen", LAW_T_INT)`
	paramsRow = `"reno_int": {"qlen_thresh_bytes": 999, "init_cwnd_segs": 0, "max_cwnd_bytes": 1000, "int_max_age_ns": 0},`
	checkRow  = `"reno_int": {nil, {"qlen_thresh_bytes=1000", "int_max_age_ns=2000000"}},`
)

// TestAddALaw follows "How to add a law" in a copy of the tree: the law's
// header, one table row with its parameter list, its rows in params_test.go
// and bpfcheck_test.go, make generate, the README's table. Then the copy's
// law tests pass (user space and BPF, step for step), the law registers
// and carries a flow through a bottleneck (root), and `cclab law params`
// shows it. A step the doc forgets fails one of these.
func TestAddALaw(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a copy of the tree (minutes)")
	}
	if os.Geteuid() != 0 {
		t.Skip("registering a law needs root")
	}
	for _, tool := range []string{"clang", "git", "bpftool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	repo, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	tree := copyTree(t, ctx, repo)

	// 1. The law: its header, one table row and its parameter list.
	header, err := os.ReadFile("testdata/reno_int.h")
	if err != nil {
		t.Fatal(err)
	}
	write(t, tree, "kmod/law/reno_int.h", string(header))
	n := len(strings.Fields(run(t, ctx, tree, "scripts/laws")))
	params, err := os.ReadFile("testdata/table.h")
	if err != nil {
		t.Fatal(err)
	}
	table := read(t, tree, "kmod/law/law_table.h")
	table = addRow(t, table, fmt.Sprintf(row, n+1))
	table = insertBefore(t, table, "/* enum law_id:", string(params))
	write(t, tree, "kmod/law/law_table.h", table)

	// 2. The tests that take a row per law.
	edit(t, tree, "kmod/law/params_test.go", "// by law name: a law without a row fails below\n", "\t\t"+paramsRow+"\n")
	edit(t, tree, "kmod/law/bpfcheck/bpfcheck_test.go", "variants := map[string][][]string{\n", "\t\t"+checkRow+"\n")

	// 3. make generate (its steps, with the tree's vmlinux.h) and the
	// README's parameter table.
	run(t, ctx, tree, "go", "run", "./kmod/law/lawgen")
	run(t, ctx, tree, "go", "generate", "./kmod/bpf/", "./kmod/law/bpfcheck/")
	run(t, ctx, tree, "scripts/generated", "stamp")
	run(t, ctx, tree, "go", "test", "./kmod/law", "-run", "TestREADMEParamTables", "-update-readme")

	// What follows from the table: checked, not edited.
	run(t, ctx, tree, "scripts/generated", "check")
	if got := run(t, ctx, tree, "scripts/laws", "int"); !strings.Contains(got, name) {
		t.Errorf("scripts/laws int: %q lacks %s", got, name)
	}
	run(t, ctx, tree, "go", "test", "-count=1", "./kmod/law/", "./kmod/law/bpfcheck/", "./kmod/law/lawgen/", "./kmod/bpf/")
	out := run(t, ctx, tree, "go", "run", "./cmd/cclab", "law", "params", "--law", name)
	for _, want := range []string{"qlen_thresh_bytes", "int_max_age_ns"} {
		if !strings.Contains(out, want) {
			t.Errorf("cclab law params --law %s:\n%s\nlacks %s", name, out, want)
		}
	}
	out = run(t, ctx, tree, "go", "test", "-count=1", "-v", "-run", "^(TestEachLawRegistersAndUnregisters|TestLawsCarryTraffic)$/^"+name+"$", "./kmod/lawload/")
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Mbit/s") || strings.Contains(l, "--- ") {
			t.Log(strings.TrimSpace(l))
		}
	}
	for _, want := range []string{"--- PASS: TestEachLawRegistersAndUnregisters/" + name, "--- PASS: TestLawsCarryTraffic/" + name} {
		if !strings.Contains(out, want) {
			t.Errorf("kmod/lawload:\n%s\nlacks %q", out, want)
		}
	}
}

// copyTree copies the files git tracks (and new ones it does not ignore)
// and the generated vmlinux.h into a fresh git work tree.
func copyTree(t *testing.T, ctx context.Context, repo string) string {
	t.Helper()
	tree := t.TempDir()
	files := strings.Split(strings.TrimRight(run(t, ctx, repo, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"), "\x00"), "\x00")
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(repo, f))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(repo, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(tree, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	vmlinux := filepath.Join(tree, "build/include/vmlinux.h")
	if err := os.MkdirAll(filepath.Dir(vmlinux), 0o755); err != nil {
		t.Fatal(err)
	}
	btf := run(t, ctx, tree, "bpftool", "btf", "dump", "file", "/sys/kernel/btf/vmlinux", "format", "c")
	write(t, tree, "build/include/vmlinux.h", btf)
	run(t, ctx, tree, "git", "init", "-q")
	return tree
}

func run(t *testing.T, ctx context.Context, dir, prog string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s\n%s", prog, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func read(t *testing.T, tree, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tree, path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, tree, path, s string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(tree, path), []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// edit inserts text after the line ending in after, in path.
func edit(t *testing.T, tree, path, after, text string) {
	t.Helper()
	s := read(t, tree, path)
	i := strings.Index(s, after)
	if i < 0 {
		t.Fatalf("%s: no %q to add the law's row after", path, after)
	}
	i += len(after)
	write(t, tree, path, s[:i]+text+s[i:])
}

func insertBefore(t *testing.T, s, marker, text string) string {
	t.Helper()
	i := strings.Index(s, marker)
	if i < 0 {
		t.Fatalf("law_table.h: no %q", marker)
	}
	return s[:i] + text + s[i:]
}

// addRow appends a row to LAW_TABLE: after its last continued line.
func addRow(t *testing.T, table, row string) string {
	t.Helper()
	i := strings.Index(table, "#define LAW_TABLE(X)")
	if i < 0 {
		t.Fatal("law_table.h: no LAW_TABLE")
	}
	for {
		end := strings.IndexByte(table[i:], '\n')
		if end < 0 {
			t.Fatal("law_table.h: LAW_TABLE does not end")
		}
		line := strings.TrimRight(table[i:i+end], " \t")
		if !strings.HasSuffix(line, "\\") {
			return table[:i+end] + " \\\n\t" + row + table[i+end:]
		}
		i += end + 1
	}
}
