//go:build unix

package sandbox

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
)

// recount is the next id and the total of a journal's changes from a
// read of its whole list (what tally gives without the running totals).
func recount(t *testing.T, j *journal) (int, int64) {
	t.Helper()
	changes, err := j.all()
	if err != nil {
		t.Fatal(err)
	}
	next, total := 1, int64(0)
	for _, c := range changes {
		next = max(next, c.seq+1)
		total = satAdd(total, c.cost(c.size))
	}
	return next, total
}

// TestJournalTally: the id and total read from the newest record are
// those a whole read gives, across random changes of random sizes and
// the evictions a small max_bytes forces; no counter file is written by
// recording; history shows no running total; a torn end or a list of
// records from before the running totals is read whole; and ids go on
// rising past a purge that drops the newest changes.
func TestJournalTally(t *testing.T) {
	fx := newJournalFixture(t)
	s := fx.open(func(p *policy.Policy) { p.Journal.MaxBytes = 400 << 10 })
	j := func() *journal { return s.work.jn }
	r := rand.New(rand.NewPCG(7, 7))
	last := 0
	for i := range 120 {
		content := strings.Repeat(strconv.Itoa(i), 1+r.IntN(20000))
		id := fx.write(s, fmt.Sprintf("f%d.txt", r.IntN(6)), content)
		seq, err := strconv.Atoi(id)
		if err != nil || seq != last+1 {
			t.Fatalf("change %d: id %q after %d", i, id, last)
		}
		last = seq
		next, total, err := j().counters()
		if err != nil {
			t.Fatal(err)
		}
		if wn, wt := recount(t, j()); next != wn || total != wt {
			t.Fatalf("change %d: tally %d %d, a whole read %d %d", i, next, total, wn, wt)
		}
	}
	if _, err := os.Lstat(filepath.Join(j().dir, countersFile)); err == nil {
		t.Error("recording changes wrote a counter file")
	}
	s.Changes(func(c Change) bool {
		if c.Held != nil {
			t.Errorf("history shows change %s's running total", c.ID)
		}
		return false
	})

	// A torn end: read whole, and the next change is recorded after it.
	list := filepath.Join(j().dir, changesFile)
	f, err := os.OpenFile(list, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"change_id":"99999","time":`)
	f.Close()
	if next, _, err := j().counters(); err != nil || next != last+1 {
		t.Errorf("a torn end: next %d (%v), want %d", next, err, last+1)
	}
	if id := fx.write(s, "g.txt", "g"); id != strconv.Itoa(last+1) {
		t.Errorf("after a torn end: id %s, want %d", id, last+1)
	}
	last++

	// Records from before the running totals: read whole.
	b, err := os.ReadFile(list)
	if err != nil {
		t.Fatal(err)
	}
	var old strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		c, ok := j().decode([]byte(line))
		if !ok {
			continue
		}
		c.Held = nil
		old.Write(c.line())
		old.WriteByte('\n')
	}
	if err := os.WriteFile(list, []byte(old.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	wn, wt := recount(t, j())
	if next, total, err := j().counters(); err != nil || next != wn || total != wt {
		t.Errorf("records without running totals: %d %d (%v), want %d %d", next, total, err, wn, wt)
	}

	// A purge that drops the newest change (under this policy, every
	// change): its id is not used again.
	id := fx.write(s, "h.txt", "h")
	if removed, _, err := s.PurgeJournal(); err != nil || removed == 0 {
		t.Fatalf("purge: %d removed, %v", removed, err)
	}
	got := fx.write(s, "k.txt", "k")
	if mustAtoi(t, got) <= mustAtoi(t, id) {
		t.Errorf("after purging change %s, the next change is %s", id, got)
	}

	// An earlier fsbox sharing the journal: it takes its next id from the
	// counter file, which is kept true after each record while it exists,
	// and its records (without held) are followed by the file's total.
	if n, _, ok := j().counterFile(); !ok || n != mustAtoi(t, got)+1 {
		t.Errorf("the counter file after change %s: next %d (%v)", got, n, ok)
	}
	seq := mustAtoi(t, got) + 1
	f, err = os.OpenFile(list, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, `{"change_id":"%d","time":"2026-01-01T00:00:00Z","command":"write","paths":[],"bytes":0,"kept":true}`+"\n", seq)
	f.Close()
	j().setCounters(seq+1, 12345)
	if next, total, err := j().counters(); err != nil || next != seq+1 || total != 12345 {
		t.Errorf("after an earlier fsbox's record: %d %d (%v), want %d 12345", next, total, err, seq+1)
	}
	if got := fx.write(s, "m.txt", "m"); mustAtoi(t, got) != seq+1 {
		t.Errorf("after an earlier fsbox's change %d, the next change is %s", seq, got)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
