// Command lawgen writes the files the law table (kmod/law/law_table.h)
// generates: each law's BPF build source (kmod/bpf/<law>.bpf.c, its
// traits as defines), kmod/bpf/gen.go (the objects' build lines), the
// module Kbuild and dkms.conf, and law_headers.h (every law's core). With
// -check it writes nothing and fails when a file differs from what the
// table gives, or a BPF source belongs to no law (scripts/generated check).
//
//	go run ./kmod/law/lawgen [-check] [-root DIR]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	check := flag.Bool("check", false, "fail if a generated file is stale instead of writing it")
	root := flag.String("root", ".", "the repository's root")
	flag.Parse()
	if err := run(*root, *check); err != nil {
		fmt.Fprintln(os.Stderr, "lawgen:", err)
		os.Exit(1)
	}
}

func run(root string, check bool) error {
	rows, err := readTable(filepath.Join(root, "kmod/law/law_table.h"))
	if err != nil {
		return err
	}
	out := outputs(rows)
	var stale []string
	paths := make([]string, 0, len(out))
	for p := range out {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		full := filepath.Join(root, p)
		old, err := os.ReadFile(full)
		if err == nil && bytes.Equal(old, []byte(out[p])) {
			continue
		}
		if check {
			stale = append(stale, p)
			continue
		}
		if err := os.WriteFile(full, []byte(out[p]), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", p, err)
		}
	}
	// a BPF source without a row: a law removed from the table, or added
	// by hand beside it
	srcs, err := filepath.Glob(filepath.Join(root, "kmod/bpf/*.bpf.c"))
	if err != nil {
		return fmt.Errorf("list BPF sources: %w", err)
	}
	for _, s := range srcs {
		rel := "kmod/bpf/" + filepath.Base(s)
		if _, ok := out[rel]; !ok {
			stale = append(stale, rel+" (no law of the table)")
		}
	}
	missing, err := lawFiles(root, rows)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("the law table and the laws' files disagree: %s", strings.Join(missing, "; "))
	}
	if len(stale) > 0 {
		return fmt.Errorf("files the law table generates are stale: %s; run 'make generate' (or go run ./kmod/law/lawgen) and commit them",
			strings.Join(stale, ", "))
	}
	return nil
}

// lawFiles checks the files a row names but does not generate: each law's
// core kmod/law/<name>.h, and kmod/tcp_<name>.c exactly for the laws with
// LAW_T_MODULE.
func lawFiles(root string, rows []row) ([]string, error) {
	var out []string
	module := map[string]bool{}
	for _, r := range rows {
		if _, err := os.Stat(filepath.Join(root, "kmod/law", r.name+".h")); err != nil {
			out = append(out, fmt.Sprintf("law %s has no core kmod/law/%s.h", r.name, r.name))
		}
		if r.has("LAW_T_MODULE") {
			module[r.name] = true
			if _, err := os.Stat(filepath.Join(root, "kmod", "tcp_"+r.name+".c")); err != nil {
				out = append(out, fmt.Sprintf("law %s has LAW_T_MODULE but no kmod/tcp_%s.c", r.name, r.name))
			}
		}
	}
	mods, err := filepath.Glob(filepath.Join(root, "kmod/tcp_*.c"))
	if err != nil {
		return nil, fmt.Errorf("list modules: %w", err)
	}
	for _, m := range mods {
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), "tcp_"), ".c")
		if !module[name] {
			out = append(out, fmt.Sprintf("kmod/tcp_%s.c is the module of no law with LAW_T_MODULE", name))
		}
	}
	return out, nil
}
