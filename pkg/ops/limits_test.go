package ops

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// limitCase is one command run under some limits: run returns the result,
// need is the smallest value of the limit that cuts nothing.
type limitCase struct {
	name  string
	limit func(l *policy.Limits) *int64
	need  int64
	run   func(sb *sandbox.Sandbox) (any, *Truncation, error)
	wrote string // a file that success must leave holding limitsText
}

const limitsText = "pear 3\napple 10\nfig 2\npear 3\nkiwi 7\n" // 5 lines, 35 bytes

func limitCases() []limitCase {
	readBytes := func(l *policy.Limits) *int64 { return &l.MaxReadBytes }
	writeBytes := func(l *policy.Limits) *int64 { return &l.MaxWriteBytes }
	results := func(l *policy.Limits) *int64 { return &l.MaxResults }
	sortBytes := func(l *policy.Limits) *int64 { return &l.MaxSortBytes }
	n := int64(len(limitsText))
	return []limitCase{
		{"read", readBytes, n, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Read(context.Background(), sb, ReadOptions{Path: "t.txt"})
			return r, &r.Truncation, err
		}, ""},
		{"read page", readBytes, 22, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Read(context.Background(), sb, ReadOptions{Path: "t.txt", Offset: 1, Limit: 3})
			r.SHA256 = nil // a file over the cap is paged without a sum
			return r, &r.Truncation, err
		}, ""},
		{"sort", sortBytes, n, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Sort(context.Background(), sb, SortOptions{Path: "t.txt", Numeric: true, Keys: []string{"2"}})
			return r, &r.Truncation, err
		}, ""},
		{"sort results", results, 5, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Sort(context.Background(), sb, SortOptions{Path: "t.txt"})
			return r, &r.Truncation, err
		}, ""},
		{"grep", results, 2, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Grep(context.Background(), sb, GrepOptions{Pattern: "pear", Paths: []string{"t.txt"}})
			return r, &r.Truncation, err
		}, ""},
		// -c lists a count per file (two files) and counts every match.
		{"grep tree", results, 2, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Grep(context.Background(), sb, GrepOptions{Pattern: "p", Paths: []string{"."}, Count: true})
			return r, &r.Truncation, err
		}, ""},
		{"slice", results, 5, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Slice(context.Background(), sb, SliceOptions{Path: "t.txt"})
			return r, &r.Truncation, err
		}, ""},
		{"cut", results, 5, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Cut(context.Background(), sb, CutOptions{Path: "t.txt", Fields: "2", Delimiter: " "})
			return r, &r.Truncation, err
		}, ""},
		{"find", results, 3, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Find(context.Background(), sb, FindOptions{Dir: ".", MaxDepth: -1})
			return r, &r.Truncation, err
		}, ""},
		{"ls", results, 2, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Ls(context.Background(), sb, LsOptions{Path: "."})
			return r, &r.Truncation, err
		}, ""},
		{"edit", writeBytes, n + 2, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Edit(context.Background(), sb, EditOptions{Path: "t.txt", Edits: []EditSpec{{Old: "fig", New: "guava"}}, DryRun: true})
			return r, nil, err
		}, ""},
		{"write", writeBytes, n, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Write(context.Background(), sb, WriteOptions{Path: "out.txt", Content: strings.NewReader(limitsText)})
			return r, nil, err
		}, "out.txt"},
		{"append", writeBytes, n, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Write(context.Background(), sb, WriteOptions{Path: "out.txt", Content: strings.NewReader(limitsText), Append: true})
			return r, nil, err
		}, "out.txt"},
		{"cp", writeBytes, n, func(sb *sandbox.Sandbox) (any, *Truncation, error) {
			r, err := Copy(context.Background(), sb, "t.txt", "copy.txt", true)
			return r, nil, err
		}, "copy.txt"},
	}
}

var mtimeRE = regexp.MustCompile(`"mtime":"[^"]*"`)

// runLimited runs c in a fresh workdir whose policy has value in c's limit.
func runLimited(t testing.TB, c limitCase, value int64) (string, *Truncation, error) {
	dir := t.TempDir()
	must(t, os.WriteFile(filepath.Join(dir, "t.txt"), []byte(limitsText), 0o644))
	must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "sub", "p.txt"), []byte("pp\n"), 0o644))
	p := policy.DefaultPolicy(dir)
	*c.limit(&p.Limits) = value
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	v, tr, err := c.run(sb)
	b, _ := json.Marshal(v)
	s := string(b)
	if err == nil && c.wrote != "" {
		if got, rerr := os.ReadFile(filepath.Join(dir, c.wrote)); rerr != nil || string(got) != limitsText {
			t.Errorf("%s with limit %d reported success but left %q (%v)", c.name, value, got, rerr)
		}
	}
	return mtimeRE.ReplaceAllString(s, ""), tr, err
}

// checkLimit asserts the rule for one limit value: at or above the need,
// the very result of an ample limit; below it, a cut or too_large.
func checkLimit(t *testing.T, c limitCase, value int64, want string) {
	got, tr, err := runLimited(t, c, value)
	if value >= c.need {
		if err != nil || got != want {
			t.Errorf("%s, limit %d (need %d): got %s, %v; want %s", c.name, value, c.need, got, err, want)
		}
		return
	}
	cut := tr != nil && tr.Truncated
	if !cut && (err == nil || fserr.AsError(err).Code != fserr.CodeTooLarge) {
		t.Errorf("%s, limit %d (need %d): neither truncated nor too_large: %s, %v", c.name, value, c.need, got, err)
	}
}

// TestLimitsUpToMaxInt64 runs every limited command under each limit from
// 1 to 2^63-1: any value the policy accepts gives the right answer or an
// honest cut, never an overflowed one (issue 12 item 12: on 1b30963, grep
// found nothing, sort printed nothing and read failed with makeslice at
// 2^63-1).
func TestLimitsUpToMaxInt64(t *testing.T) {
	for _, c := range limitCases() {
		want, _, err := runLimited(t, c, c.need)
		if err != nil {
			t.Fatalf("%s at its need %d: %v", c.name, c.need, err)
		}
		for _, v := range []int64{1, c.need - 1, c.need, c.need + 1, 1 << 31, 1 << 32, MaxHold, MaxHold + 1,
			1 << 62, math.MaxInt64 - 1, math.MaxInt64} {
			if v >= 1 {
				checkLimit(t, c, v, want)
			}
		}
	}
}

// FuzzLimits is TestLimitsUpToMaxInt64 for any value of any limit.
func FuzzLimits(f *testing.F) {
	f.Add(uint8(0), int64(math.MaxInt64))
	f.Add(uint8(3), int64(1))
	f.Add(uint8(5), int64(math.MaxInt64-1))
	cases := limitCases()
	wants := map[int]string{}
	f.Fuzz(func(t *testing.T, which uint8, v int64) {
		if v < 1 {
			return // the policy refuses it (config)
		}
		i := int(which) % len(cases)
		c := cases[i]
		want, ok := wants[i]
		if !ok {
			var err error
			if want, _, err = runLimited(t, c, c.need); err != nil {
				t.Fatal(err)
			}
			wants[i] = want
		}
		checkLimit(t, c, v, want)
	})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
