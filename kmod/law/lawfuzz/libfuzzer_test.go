package lawfuzz

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// clang is the compiler of the BPF builds (scripts/bootstrap installs it);
// its libFuzzer makes the run coverage-guided on the C itself.
const clang = "clang-14"

// TestLibFuzzer builds libfuzzer.c with clang's libFuzzer and UBSan
// (including unsigned overflow and implicit truncation, minus the
// intended wraps in ignorelist.txt) and fuzzes for a few seconds from the
// committed corpus. A finding or a broken invariant fails the test with
// libFuzzer's report.
func TestLibFuzzer(t *testing.T) {
	if _, err := exec.LookPath(clang); err != nil {
		t.Fatalf("%s not found (scripts/bootstrap installs it): %v", clang, err)
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "lawfuzzer")
	build := exec.Command(clang, "-g", "-O1", "-fsanitize=fuzzer,undefined,integer",
		"-fno-sanitize-recover=all", "-fsanitize-ignorelist=ignorelist.txt",
		"libfuzzer.c", "-o", bin)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build libFuzzer target: %v\n%s", err, out)
	}
	// libFuzzer adds new inputs to its first corpus directory: a scratch copy.
	work := filepath.Join(dir, "corpus")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	seeds, err := filepath.Glob(filepath.Join("testdata", "libfuzzer", "*"))
	if err != nil || len(seeds) == 0 {
		t.Fatalf("no seed corpus in testdata/libfuzzer (%v)", err)
	}
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, filepath.Base(s)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	secs := "3"
	if testing.Short() {
		secs = "1"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	run := exec.CommandContext(ctx, bin, "-max_total_time="+secs,
		"-artifact_prefix="+dir+"/", work)
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("libFuzzer found a problem: %v\n%s", err, tail(out, 4000))
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
