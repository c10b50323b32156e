//go:build unix

package main

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// The journal rows (issue 17): what keeping prior content costs a write
// and an edit, how fast history lists 10,000 changes and the newest 10 of
// 100,000, and how fast undo takes back the newest of 10,000.
//
// The journal base directory (the policy's [journal] dir) holds one
// subdirectory per writable root, named by a hash of the root's canonical
// path and of its identity (device, inode, birth time); a journal written
// at the top of the base directory (the layout before) is ignored. The
// bench does not compute those names: each journal is made by fsbox
// itself, at a first change in the data directory under the row's policy,
// and only then are its change list and counters replaced by the
// generated ones (see genJournal).
const (
	dirJournal = "journal-rows"

	// The prepared journals. Each is a dataset named by a small marker
	// file in the data directory (the change fsbox recorded to make the
	// journal), under a policy of the same name whose journal lies beside
	// the data directory (journalBase).
	journalHist10k  = "journal-history-10k"  // 10,000 changes, for history-10k
	journalHist100k = "journal-history-100k" // 100,000 changes, for history-limit-100k
	journalUndo10k  = "journal-undo-10k"     // 10,000 changes and then the undo row's own, for undo-newest-10k

	// undoFile is the file undo-newest-10k's setup writes and its undo
	// restores (to undoBase, from the journal's objects).
	undoFile = dirJournal + "/undo.txt"
	undoBase = "the content undo-newest-10k restores\n"
)

var (
	noJournal    = policy{"no-journal", "[journal]\nenabled = false\n"}
	noJournalBig = policy{"no-journal-big", bigWrite.text + "[journal]\nenabled = false\n"}

	hist10k  = journalPolicy(journalHist10k)
	hist100k = journalPolicy(journalHist100k)
	undo10k  = journalPolicy(journalUndo10k)
)

// journalPolicy is the default policy with its journal at journalBase of
// name (writePolicy puts that place for JOURNAL_DIR).
func journalPolicy(name string) policy {
	return policy{name, "[journal]\ndir = \"JOURNAL_DIR\"\n"}
}

// journalBase is the journal base directory of the policy named name:
// beside the data directory data, outside the workdir, as fsbox requires.
func journalBase(data, name string) string {
	return filepath.Join(filepath.Dir(data), filepath.Base(data)+"."+name+".journal")
}

// genJournalDir makes the rows' directory (the write and edit rows' files,
// undo-newest-10k's undoFile).
func genJournalDir(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	return 0, os.MkdirAll(path, 0o755)
}

// fsboxTool is the fsbox that makes the journals and runs the undo row's
// setup: -fsbox, with the environment the rows get (set by run before
// the data is prepared).
var fsboxTool struct {
	path string
	env  []string
}

// runFsbox runs fsbox with args in dir (the data directory, its workdir)
// and returns its stdout; its error says what it printed on stderr.
func runFsbox(dir string, args ...string) ([]byte, error) {
	if fsboxTool.path == "" {
		return nil, errors.New("no fsbox binary to make the journal with")
	}
	cmd := exec.Command(fsboxTool.path, args...)
	cmd.Dir, cmd.Env = dir, fsboxTool.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("fsbox %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// The generated records, as fsbox writes them (pkg/sandbox Change).
type (
	genState struct {
		Type   string `json:"type"`
		SHA256 string `json:"sha256"`
		Size   int64  `json:"size"`
		Mode   string `json:"mode"`
	}
	genPath struct {
		Path   string    `json:"path"`
		Before *genState `json:"before"`
		After  *genState `json:"after"`
	}
	genChange struct {
		ID      string    `json:"change_id"`
		Time    string    `json:"time"`
		Command string    `json:"command"`
		Paths   []genPath `json:"paths"`
		Bytes   int64     `json:"bytes"`
		Kept    bool      `json:"kept"`
	}
)

var journalDirName = regexp.MustCompile(`^[0-9a-f]{16}-[0-9a-f]{8}$`)

// genJournal returns the generator of the journal name: n changes (an
// edit or a write of one of 300 paths each, its prior content kept) in
// the data directory's journal under the policy name. path (the marker
// file) is written by fsbox, which so makes the root's journal
// subdirectory and its identity record; its change list and counters are
// then replaced by the generated ones, and fsbox history must show the
// newest three (else the generator fails: a journal fsbox does not read
// would time nothing).
func genJournal(name string, n int) func(path string, _ int64) (int64, error) {
	return func(path string, _ int64) (int64, error) {
		data := filepath.Dir(path)
		base := journalBase(data, name)
		// This journal afresh, and the leftovers of the layout before
		// (one journal at the top of DATA.journal-rows.journal, under
		// the policy journal-10k).
		for _, p := range []string{base, journalBase(data, dirJournal), data + ".journal-10k.toml", path} {
			if err := os.RemoveAll(p); err != nil {
				return 0, err
			}
		}
		cfg := writePolicy(data, journalPolicy(name))
		text := fmt.Sprintf("The prepared journal %s (%d changes) is in %s.\n", name, n, base)
		if _, err := runFsbox(data, "--config", cfg, "write", filepath.Base(path), "--content", text); err != nil {
			return 0, err
		}
		ents, err := os.ReadDir(base)
		if err != nil {
			return 0, fmt.Errorf("fsbox made no journal in %s: %v", base, err)
		}
		var subs []string
		for _, e := range ents {
			if journalDirName.MatchString(e.Name()) && e.IsDir() {
				subs = append(subs, e.Name())
			}
		}
		if len(subs) != 1 {
			return 0, fmt.Errorf("%s holds %d journal subdirectories (%v), want exactly the one fsbox just made", base, len(subs), subs)
		}
		jdir := filepath.Join(base, subs[0])

		r := &rng{s: 0x5eed17}
		sum := func() string {
			b := make([]byte, 0, 64)
			for range 4 {
				b = fmt.Appendf(b, "%016x", r.next())
			}
			return string(b)
		}
		const nPaths = 300
		var cur [nPaths]*genState // what each path holds now
		t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		var buf bytes.Buffer
		var total int64 // the counters' TOTAL: what the changes hold on disk (fsbox's Change.cost)
		for i := 1; i <= n; i++ {
			k := r.intn(nPaths)
			if cur[k] == nil {
				cur[k] = &genState{Type: "file", SHA256: sum(), Size: int64(1000 + r.intn(2000)), Mode: "0644"}
			}
			after := &genState{Type: "file", SHA256: sum(), Size: int64(1000 + r.intn(2000)), Mode: "0644"}
			c := genChange{
				ID:      strconv.Itoa(i),
				Time:    t0.Add(time.Duration(i)*7*time.Second + time.Duration(r.intn(1e9))).Format(time.RFC3339Nano),
				Command: []string{"edit", "write"}[i%2],
				Paths:   []genPath{{Path: fmt.Sprintf("src/pkg%02d/f%03d.go", k%30, k), Before: cur[k], After: after}},
				Bytes:   cur[k].Size,
				Kept:    true,
			}
			line, err := json.Marshal(c)
			if err != nil {
				return 0, err
			}
			buf.Write(line)
			buf.WriteByte('\n')
			total += int64(len(line)) + 1 + cur[k].Size + 4096
			cur[k] = after
		}
		for _, f := range []struct {
			name string
			b    []byte
		}{{"changes.jsonl", buf.Bytes()}, {"counters", fmt.Appendf(nil, "%d %d\n", n+1, total)}} {
			tmp := filepath.Join(jdir, f.name+".bench-tmp")
			if err := os.WriteFile(tmp, f.b, 0o600); err != nil {
				return 0, err
			}
			if err := os.Rename(tmp, filepath.Join(jdir, f.name)); err != nil {
				return 0, err
			}
		}
		if err := checkJournal(data, name, n, true); err != nil {
			return 0, fmt.Errorf("the generated journal %s does not work: %v", jdir, err)
		}
		return int64(n), nil
	}
}

// checkJournal asks fsbox history --limit 3 under the journal's policy
// for the newest changes: there must be three, newest first, the newest
// n and the others n-1 and n-2 (exact), or at least n (the undo row's
// journal grows with every run).
func checkJournal(data, name string, n int, exact bool) error {
	out, err := runFsbox(data, "--config", writePolicy(data, journalPolicy(name)), "history", "--limit", "3", "--format", "json")
	if err != nil {
		return err
	}
	var h struct {
		Changes []struct {
			ID string `json:"change_id"`
		} `json:"changes"`
		Count int `json:"count"`
	}
	if err := json.Unmarshal(out, &h); err != nil {
		return fmt.Errorf("fsbox history: %v: %.200q", err, out)
	}
	if h.Count != 3 || len(h.Changes) != 3 {
		return fmt.Errorf("fsbox history --limit 3 shows %d changes, want 3: %.300q", len(h.Changes), out)
	}
	newest, _ := strconv.Atoi(h.Changes[0].ID)
	prev := newest + 1
	for _, c := range h.Changes {
		id, err := strconv.Atoi(c.ID)
		if err != nil || id >= prev || exact && id != prev-1 {
			return fmt.Errorf("fsbox history --limit 3 shows the ids %q, %q, %q, want the newest first (three in a row in a generated journal)", h.Changes[0].ID, h.Changes[1].ID, h.Changes[2].ID)
		}
		prev = id
	}
	if newest < n || exact && newest != n {
		return fmt.Errorf("fsbox history shows %d as the newest change, want %d", newest, n)
	}
	return nil
}

// journalChecks are run by prepare on a prepared journal it would reuse:
// one fsbox no longer reads (another layout, a data directory made anew)
// is made again.
var journalChecks = map[string]func(data string) error{
	journalHist10k:  func(data string) error { return checkJournal(data, journalHist10k, 10_000, true) },
	journalHist100k: func(data string) error { return checkJournal(data, journalHist100k, 100_000, true) },
	journalUndo10k:  func(data string) error { return checkJournal(data, journalUndo10k, 10_000, false) },
}

// freshUndoChange is undo-newest-10k's setup: a fresh newest change for
// undo to take back, made by fsbox (so the journal keeps its prior
// content, undoBase, as a real object): undoFile gets random content.
// When undoFile does not hold undoBase (the first run, or a run whose
// undo failed), fsbox writes that first.
func freshUndoChange(dir string) error {
	cfg := writePolicy(dir, undo10k)
	if b, err := os.ReadFile(filepath.Join(dir, undoFile)); err != nil || string(b) != undoBase {
		if _, err := runFsbox(dir, "--config", cfg, "write", undoFile, "--content", undoBase); err != nil {
			return err
		}
	}
	_, err := runFsbox(dir, "--config", cfg, "write", undoFile, "--content", rand.Text()+"\n")
	return err
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
