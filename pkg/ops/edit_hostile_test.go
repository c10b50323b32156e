//go:build unix

package ops

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// periodicEdits is a hostile --edits-json over a file of size bytes: it
// repeats a random string of period bytes, and the edits, all with
// "all", are every substring of the period of each length in lens, at
// every offset (lens × period edits), so each byte of the file ends
// len(lens) counted occurrences, of edits that overlap one another.
func periodicEdits(size, period int, lens []int, newText string) ([]byte, []map[string]any) {
	r := rand.New(rand.NewSource(1))
	b := make([]byte, period)
	for i := range b {
		b[i] = 'a' + byte(r.Intn(26))
	}
	data := bytes.Repeat(b, size/period+1)[:size]
	twice := string(b) + string(b)
	var es []map[string]any
	for _, l := range lens {
		for o := range period {
			es = append(es, map[string]any{"old": twice[o : o+l], "new": newText, "all": true})
		}
	}
	return data, es
}

// Fails on c24bc27: the first red team's case with "all" (3,000 edits
// matching every byte of a 4 MiB file 9 or 10 times) allocated 1.4 GiB,
// its heap 850 MiB at its peak (1 GiB resident under /usr/bin/time -v),
// before it refused with too_large: every occurrence the match budget
// allows (34M) was listed, then listed again; 3,000 edits that overlap
// within the budget allocated 2.9 GiB before usage or too_large; with
// sequential, 8 edits of every byte of 1 MiB 1.8 GiB (each step's
// replacements and every piece of the text an object of its own), every
// other byte of 4 MiB deleted 846 MiB. Now the listing stops at the first
// overlap and sequential keeps the runs of the original as varints: a
// refused case allocates within 4 × the file (about 9 MiB, 8 of them the
// edits' own), a sequential one within 8 or 32 ×. Two edits replacing
// every byte (296 MiB on c24bc27) are here for their answer, under a
// loose bound: the diff of every line, 2.7 × the file, built in growing
// buffers (about 100 MiB, 50 × under -race), and 8 bytes per replacement.
// Each bound is so many files plus 8 MiB for the edits themselves;
// TotalAlloc over the call bounds the most it holds at once. The answers
// are those of c24bc27.
func TestHostileEditsHeldToTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("4 MiB files and 3,000 edits")
	}
	lens := func(from, to int) (ls []int) {
		for l := from; l <= to; l++ {
			ls = append(ls, l)
		}
		return ls
	}
	// The red team's file is 4 MiB; under the race detector, whose
	// matching runs some ten times slower, 1 MiB (each bound is in files).
	size := 4 << 20
	if raceOn {
		size = 1 << 20
	}
	budget, budgetEdits := periodicEdits(size, 300, lens(4, 13), "yy")
	overlap, overlapEdits := periodicEdits(size, 375, lens(4, 11), "y")
	_, growEdits := periodicEdits(size, 375, lens(4, 11), strings.Repeat("y", 20))
	// disjoint: two edits, a replacement on every byte but the newlines,
	// none overlapping: a listing the edit needs in full.
	disjoint := bytes.Repeat([]byte("ab\n"), size/3)
	// sequential: every byte of 1 MiB replaced by each of 8 edits, one
	// after another (back to the file); every other byte of 4 MiB deleted,
	// then the rest replaced.
	flip := make([]map[string]any, 8)
	for i := range flip {
		flip[i] = map[string]any{"old": "ab"[i%2 : i%2+1], "new": "ba"[i%2 : i%2+1], "all": true}
	}
	as, abs := bytes.Repeat([]byte("a"), size/4), bytes.Repeat([]byte("ab"), size/2)
	all := func(old, new string) map[string]any { return map[string]any{"old": old, "new": new, "all": true} }
	// editsCost is what the edits themselves may take, whatever the file:
	// 3,000 of them as a tool call's JSON, decoded, and their matcher.
	const editsCost = 8 << 20
	cases := []struct {
		name  string
		data  []byte
		edits []map[string]any
		want  string // "code: message prefix", or the edited file's sha256
		bound int    // the allocations' bound, in files
	}{
		{"past the match budget", budget, budgetEdits, fmt.Sprintf("too_large: the edits match f more than %d times over", maxEditMatches(size)), 4},
		{"overlapping", overlap, overlapEdits, "usage: edits 1 and 376 overlap at line 1:", 4},
		{"overlapping and growing", overlap, growEdits, "too_large: the edited f would be over max_write_bytes = 16777216", 4},
		{"disjoint", disjoint, []map[string]any{all("a", "x"), all("b", "y")},
			sha256Hex(bytes.ReplaceAll(bytes.ReplaceAll(disjoint, []byte("a"), []byte("x")), []byte("b"), []byte("y"))), 64},
		{"sequential flips", as, flip, sha256Hex(as), 8},
		{"sequential deletions", abs, []map[string]any{all("b", ""), all("a", "c")}, sha256Hex(bytes.Repeat([]byte("c"), size/2)), 32},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sb, dir := testSandbox(t)
			if err := os.WriteFile(filepath.Join(dir, "f"), c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			var (
				r   *EditResult
				err error
			)
			alloc := totalAlloc(func() {
				r, err = editCall(sb, map[string]any{"path": "f", "edits": c.edits, "dry_run": true, "sequential": strings.HasPrefix(c.name, "sequential")})
			})
			got := ""
			if err != nil {
				e := fserr.AsError(err)
				if e == nil {
					t.Fatalf("error %v", err)
				}
				got = string(e.Code) + ": " + e.Msg
			} else {
				got = r.SHA256
			}
			if !strings.HasPrefix(got, c.want) {
				t.Errorf("got %.200s, want %s", got, c.want)
			}
			bound := uint64(c.bound*len(c.data) + editsCost)
			t.Logf("%d edits over %d bytes: %.1f MiB allocated (bound %.1f MiB)", len(c.edits), len(c.data), mib(alloc), mib(bound))
			if alloc > bound {
				t.Errorf("the edit allocated %.1f MiB, over %d × the file + 8 MiB = %.1f MiB", mib(alloc), c.bound, mib(bound))
			}
		})
	}
}

// totalAlloc is how many bytes fn allocated on the heap (freed or not).
func totalAlloc(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
