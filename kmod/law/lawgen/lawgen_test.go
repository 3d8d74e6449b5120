package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed files are what the table generates.
func TestCommittedFilesMatchTheTable(t *testing.T) {
	if err := run("../../..", true); err != nil {
		t.Fatal(err)
	}
}

// A row added to the table: check names the files it changes, writing
// makes them, and a BPF source without a row is reported.
func TestCheckFindsARowsFiles(t *testing.T) {
	root := t.TempDir()
	table, err := os.ReadFile("../law_table.h")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := readTable("../law_table.h")
	if err != nil {
		t.Fatal(err)
	}
	// the new row after the table's last line: the first not continued
	lines := strings.SplitAfter(string(table), "\n")
	in := false
	for i, l := range lines {
		in = in || strings.HasPrefix(l, "#define LAW_TABLE(X)")
		if in && !strings.HasSuffix(strings.TrimRight(l, " \t\n"), "\\") {
			lines[i] = strings.TrimRight(l, "\n") + " \\\n\t" + fmt.Sprintf(`X(%d, reno_int, RENO_INT, "qlen", LAW_T_INT | LAW_T_MODULE)`, len(rows)+1) + "\n"
			break
		}
	}
	grown := strings.Join(lines, "")
	for _, d := range []string{"kmod/law", "kmod/bpf"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// the laws' own files, which the table names but does not write
	for _, r := range append(rows, row{name: "reno_int", traits: []string{"LAW_T_MODULE"}}) {
		os.WriteFile(filepath.Join(root, "kmod/law", r.name+".h"), nil, 0o644)
		if r.has("LAW_T_MODULE") {
			os.WriteFile(filepath.Join(root, "kmod", "tcp_"+r.name+".c"), nil, 0o644)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "kmod/law/law_table.h"), []byte(grown), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "kmod/bpf/gone.bpf.c"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err = run(root, true)
	if err == nil || !strings.Contains(err.Error(), "kmod/bpf/reno_int.bpf.c") || !strings.Contains(err.Error(), "gone.bpf.c (no law of the table)") {
		t.Fatalf("check: %v, want reno_int.bpf.c stale and gone.bpf.c unknown", err)
	}
	if err := run(root, false); err == nil || !strings.Contains(err.Error(), "gone.bpf.c") {
		t.Fatalf("write: %v, want gone.bpf.c still reported", err)
	}
	src, err := os.ReadFile(filepath.Join(root, "kmod/bpf/reno_int.bpf.c"))
	if err != nil || !strings.Contains(string(src), "#define LAW_NAME reno_int\n#define LAW_USES_INT\n") {
		t.Fatalf("reno_int.bpf.c: %q, %v", src, err)
	}
	kb, _ := os.ReadFile(filepath.Join(root, "kmod/Kbuild"))
	dk, _ := os.ReadFile(filepath.Join(root, "kmod/dkms.conf"))
	if !strings.Contains(string(kb), "tcp_reno_int.o") || !strings.Contains(string(dk), fmt.Sprintf(`BUILT_MODULE_NAME[%d]="tcp_reno_int"`, len(moduleRows(rows))+1)) {
		t.Errorf("Kbuild or dkms.conf lack the new law:\n%s\n%s", kb, dk)
	}
	os.Remove(filepath.Join(root, "kmod/bpf/gone.bpf.c"))
	if err := run(root, true); err != nil {
		t.Errorf("after writing: %v", err)
	}
}

// A row's own files must exist: its core, and its module with LAW_T_MODULE.
func TestMissingLawFilesReported(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "kmod/law"), 0o755)
	os.WriteFile(filepath.Join(root, "kmod/law/a.h"), nil, 0o644)
	os.WriteFile(filepath.Join(root, "kmod/tcp_c.c"), nil, 0o644)
	rows := []row{{id: 1, name: "a", traits: []string{"LAW_T_MODULE"}}, {id: 2, name: "b"}}
	got, err := lawFiles(root, rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"law a has LAW_T_MODULE but no kmod/tcp_a.c", "law b has no core kmod/law/b.h", "kmod/tcp_c.c is the module of no law"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %d problems", got, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d: %s, want %s", i, got[i], want[i])
		}
	}
}

// A malformed row is refused with the law named.
func TestBadRowsRefused(t *testing.T) {
	for _, tc := range []struct{ rows, want string }{
		{`X(2, a, A, "s", 0)`, "id 2, want 1"},
		{`X(1, a, B, "s", 0)`, "spelt B"},
		{`X(1, a, A, "s", LAW_T_INT | int)`, `trait "int"`},
	} {
		p := filepath.Join(t.TempDir(), "law_table.h")
		os.WriteFile(p, []byte("#define LAW_TABLE(X) \\\n\t"+tc.rows+"\n"), 0o644)
		if _, err := readTable(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.rows, err, tc.want)
		}
	}
}
