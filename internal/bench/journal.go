//go:build unix

package main

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The journal rows (issue 17): what keeping prior content costs a write
// and an edit, and how fast history lists 10,000 changes.
const (
	dirJournal = "journal-rows"
	historyN   = 10_000
)

var (
	noJournal    = policy{"no-journal", "[journal]\nenabled = false\n"}
	noJournalBig = policy{"no-journal-big", bigWrite.text + "[journal]\nenabled = false\n"}
	// journal10k points the journal at the prepared one (writePolicy
	// puts its place, beside the data directory, for JOURNAL_DIR).
	journal10k = policy{"journal-10k", "[journal]\ndir = \"JOURNAL_DIR\"\n"}
)

// genJournal makes the rows' directory and a journal of historyN changes
// (one edit each, over 300 paths) for history-10k.
func genJournal(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	data := filepath.Dir(path)
	j := filepath.Join(filepath.Dir(data), filepath.Base(data)+"."+dirJournal+".journal") // outside the data directory (the workdir)
	if err := os.RemoveAll(j); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(path, 0o755); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(j, 0o700); err != nil {
		return 0, err
	}
	var b strings.Builder
	for i := 1; i <= historyN; i++ {
		line, _ := json.Marshal(map[string]any{
			"change_id": fmt.Sprint(i), "time": "2026-01-01T00:00:00.000000000Z", "command": "edit",
			"paths": []any{map[string]any{"path": fmt.Sprintf("src/f%03d.go", i%300),
				"before": map[string]any{"type": "file", "sha256": strings.Repeat("a", 64), "size": 1000, "mode": "0644"},
				"after":  map[string]any{"type": "file", "sha256": strings.Repeat("b", 64), "size": 1001, "mode": "0644"}}},
			"bytes": 0,
		})
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(j, "changes.jsonl"), []byte(b.String()), 0o600); err != nil {
		return 0, err
	}
	return 0, os.WriteFile(filepath.Join(j, "counters"), fmt.Appendf(nil, "%d 0\n", historyN+1), 0o600)
}

// freshJournalFile gives name in the rows' directory fresh content of
// size bytes before a run (one line holds TOKEN, for the edit row), so
// the journal has new prior content to keep every time.
func freshJournalFile(name string, size int) func(dir string) error {
	return func(dir string) error {
		b := make([]byte, size)
		rand.Read(b)
		for i := range b {
			b[i] = 'a' + b[i]%26
			if i%80 == 79 {
				b[i] = '\n'
			}
		}
		copy(b[size/2:], "\nTOKEN\n")
		return os.WriteFile(filepath.Join(dir, dirJournal, name), b, 0o644)
	}
}
