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
)

// Files renders every generated file, keyed by its path relative to the
// repository root.
func Files() (map[string][]byte, error) {
	app := cli.DocApp()
	man, err := app.ToManWithSection(1)
	if err != nil {
		return nil, err
	}
	man += manNotes
	return map[string][]byte{"man/fsbox.1": []byte(man)}, nil
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
