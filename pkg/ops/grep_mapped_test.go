//go:build unix

package ops

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// mappedCase is one generated file and search for TestGrepMappedAgreesWithRead.
type mappedCase struct {
	data []byte
	o    GrepOptions
	geom mapGeometry
}

func (c mappedCase) String() string {
	return fmt.Sprintf("file %d bytes (%q…), geometry %+v, options -i=%v -o=%v -c=%v -l=%v -m=%v pattern %q",
		len(c.data), c.data[:min(len(c.data), 60)], c.geom, c.o.IgnoreCase, c.o.OnlyMatching, c.o.Count, c.o.FilesWithMatches, c.o.MaxCount, c.o.Pattern)
}

// genMappedCase makes a file of lines of every length (empty ones, and
// some longer than the chunks), needles at line starts, ends and middles,
// CRLF endings, a BOM, a missing last newline, and now and then a NUL;
// a geometry of a few hundred bytes, so chunk and piece edges fall
// everywhere; and one of the searches the mapped path takes.
func genMappedCase(r *rand.Rand) mappedCase {
	var b bytes.Buffer
	if r.IntN(8) == 0 {
		b.WriteString("\xef\xbb\xbf")
	}
	lines := r.IntN(400)
	for i := 0; i < lines; i++ {
		n := r.IntN(40)
		switch r.IntN(30) {
		case 0:
			n = r.IntN(3000) // longer than a chunk, sometimes than its reach
		case 1:
			n = 0
		}
		line := make([]byte, n)
		for j := range line {
			line[j] = "abcdefgh needlNEDL"[r.IntN(18)]
		}
		s := string(line)
		if r.IntN(4) == 0 {
			at := r.IntN(len(s) + 1)
			needle := "needle"
			if r.IntN(3) == 0 {
				needle = "NeEdLe"
			}
			s = s[:at] + needle + s[at:]
		}
		b.WriteString(s)
		if r.IntN(10) == 0 {
			b.WriteByte('\r')
		}
		if i < lines-1 || r.IntN(2) == 0 {
			b.WriteByte('\n')
		}
	}
	data := b.Bytes()
	if len(data) > 0 && r.IntN(15) == 0 {
		data[r.IntN(len(data))] = 0
	}
	o := GrepOptions{Pattern: "needle", Fixed: r.IntN(2) == 0, Exact: true}
	switch r.IntN(4) {
	case 0:
		o.Pattern, o.Fixed = "ne+dle|a{3}", false
	case 1:
		o.IgnoreCase = true
	}
	switch r.IntN(6) {
	case 0:
		o.Count = true
	case 1:
		o.FilesWithMatches = true
	case 2:
		o.OnlyMatching = true
	}
	if r.IntN(4) == 0 {
		m := int64(r.IntN(5))
		o.MaxCount = &m
	}
	chunk := int64(16 + r.IntN(600))
	return mappedCase{data: data, o: o, geom: mapGeometry{
		chunk: chunk, reach: int64(1 + r.IntN(int(2*chunk))), piece: 8 + r.IntN(300),
	}}
}

// TestGrepMappedAgreesWithRead: for generated files, searches and chunk
// geometries, a search through mapped windows finds exactly what reading
// the file finds: the same lines with the same numbers, columns and text,
// the same counts, the same binary verdict. Bounded by count:
// FSBOX_PROPERTY_N × 20 cases (400 by default); a failure prints its seed.
func TestGrepMappedAgreesWithRead(t *testing.T) {
	if !sandbox.MapsFiles() {
		t.Skip("this platform does not map files")
	}
	sb, dir := testSandbox(t)
	n := envInt("FSBOX_PROPERTY_N", 20) * 20
	seed := uint64(envInt("FSBOX_PROPERTY_SEED", int(rand.Uint32())))
	r := rand.New(rand.NewPCG(seed, 1))
	path := filepath.Join(dir, "f.txt")
	mappedRuns := 0
	for i := 0; i < n; i++ {
		c := genMappedCase(r)
		if err := os.WriteFile(path, c.data, 0o644); err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(c.data, 0) >= 0 && (c.o.MaxCount != nil || c.o.FilesWithMatches) {
			// A search that stops at its -m/-l line has not looked for a NUL
			// past it, in either path; where each stops looking is a block
			// edge of its own.
			continue
		}
		read := c
		read.geom.min = math.MaxInt64
		want, werr := grepShow(sb, read)
		var calls atomic.Int64 // chunks mapped: the mapped path was taken
		c.geom.mapped = func(int64) { calls.Add(1) }
		got, gerr := grepShow(sb, c)
		if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("case %d (FSBOX_PROPERTY_SEED=%d): %v\nmapped: %v\n%s\nread:   %v\n%s", i, seed, c, gerr, got, werr, want)
		}
		if calls.Load() > 0 {
			mappedRuns++
		}
	}
	if mappedRuns < n/4 {
		t.Fatalf("only %d of %d cases went through mapped windows", mappedRuns, n)
	}
}

// grepShow runs c's search on f.txt and prints everything it found.
func grepShow(sb *sandbox.Sandbox, c mappedCase) (string, error) {
	o := c.o
	o.Paths = []string{"f.txt"}
	g := c.geom
	o.geom = &g
	res, err := Grep(context.Background(), sb, o)
	var b strings.Builder
	fmt.Fprintf(&b, "count %d binary %d\n", res.Count, res.Skipped.Binary)
	if res.Matches != nil {
		for _, m := range *res.Matches {
			fmt.Fprintf(&b, "%s:%d:%d:%d:%q\n", m.Path, m.Line, m.Column, m.MatchLen, m.Text)
		}
	}
	if res.Counts != nil {
		fmt.Fprintf(&b, "counts %v\n", *res.Counts)
	}
	if res.Paths != nil {
		fmt.Fprintf(&b, "paths %v\n", *res.Paths)
	}
	return b.String(), err
}

// TestGrepMappedFileChanges truncates and rewrites a file while its
// second chunk is mapped: the search is an io error, never a crash (a
// truncated window faults) and never results from two versions. A file
// that only grew (a log being appended to) is searched as it was opened.
func TestGrepMappedFileChanges(t *testing.T) {
	if !sandbox.MapsFiles() {
		t.Skip("this platform does not map files")
	}
	sb, dir := testSandbox(t)
	path := filepath.Join(dir, "f.txt")
	data := bytes.Repeat([]byte("some line with a needle in it\n"), 4096) // 120 KiB
	lines := int64(4096)
	for _, c := range []struct {
		name   string
		change func() error
		fails  bool
	}{
		{"truncated", func() error { return os.Truncate(path, 100) }, true},
		{"rewritten", func() error {
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte("SOME"), 70000)
			return err
		}, true},
		{"appended", func() error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.Write([]byte("needle\n"))
			return err
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, count := range []bool{false, true} {
				var once sync.Once
				var herr error
				geom := mapGeometry{chunk: 16 << 10, reach: 1 << 10, piece: 4 << 10, mapped: func(k int64) {
					if k == 1 {
						once.Do(func() { herr = c.change() })
					}
				}}
				if err := os.WriteFile(path, data, 0o644); err != nil {
					t.Fatal(err)
				}
				// Times set back, so that a coarse clock cannot hide the
				// same-size rewrite.
				old := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
				if err := os.Chtimes(path, old, old); err != nil {
					t.Fatal(err)
				}
				res, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{"f.txt"}, Count: count, geom: &geom})
				if herr != nil {
					t.Fatal(herr)
				}
				e := fserr.AsError(err)
				switch {
				case c.fails && (err == nil || e.Code != fserr.CodeConflict):
					t.Fatalf("-c=%v: %v (count %d), want a conflict", count, err, res.Count)
				case !c.fails && (err != nil || res.Count != lines):
					t.Fatalf("-c=%v: %v, count %d, want the %d lines the file had when opened", count, err, res.Count, lines)
				}
			}
		})
	}
}
