// Package gendocs renders man/ from the CLI's command registry, so the
// checked-in pages cannot drift from the code: `go generate` writes them
// and TestUpToDate fails when they are stale.
package gendocs

//go:generate go run ./cmd -root ../..

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsbox/fsbox/internal/cli"
	"github.com/fsbox/fsbox/pkg/ops"
)

// Files renders every generated file, keyed by its path relative to the
// repository root: man/fsbox.1, man/fsbox-CMD.1 for each command, and the
// bash, zsh and fish completions.
func Files() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, name := range append([]string{""}, cli.CommandNames()...) {
		page, err := cli.ManPage(ops.Registry, name)
		if err != nil {
			return nil, err
		}
		file := "man/fsbox.1"
		if name != "" {
			file = "man/fsbox-" + name + ".1"
		}
		out[file] = []byte(page)
	}
	for shell, file := range map[string]string{"bash": "completions/fsbox.bash", "zsh": "completions/_fsbox", "fish": "completions/fsbox.fish"} {
		s, err := cli.Completion(ops.Registry, shell)
		if err != nil {
			return nil, err
		}
		out[file] = []byte(s)
	}
	return out, nil
}

// Run writes the files under root (write) or reports the stale ones.
func Run(root string, write bool) error {
	files, err := Files()
	if err != nil {
		return err
	}
	var stale []string
	for rel, want := range files {
		p := filepath.Join(root, rel)
		if write {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(p, want, 0o644); err != nil {
				return err
			}
			continue
		}
		have, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(have, want) {
			stale = append(stale, rel)
		}
	}
	if len(stale) > 0 {
		return fmt.Errorf("generated files are stale, run `make generate`: %v", stale)
	}
	return nil
}
