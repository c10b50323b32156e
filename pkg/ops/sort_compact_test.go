package ops

import (
	"context"
	"fmt"
	"math/rand"
	"runtime"
	"strings"
	"testing"
)

// sortBoth sorts text with o on the fast path, and on the packed -n path
// (when it applies) or the compact path.
func sortBoth(t *testing.T, text string, o SortOptions) (fast, compact string) {
	t.Helper()
	run := func() string {
		s := longLineSandbox(t, 1<<20, map[string]string{"in.txt": text})
		var b strings.Builder
		o.Path, o.Exact = "in.txt", true
		o.Sink = func(l []byte) error { b.Write(l); return nil }
		if _, err := Sort(context.Background(), s, o); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	fast = run()
	keep := sortBudget
	sortBudget = func(int) int { return -1 } // never the fast path
	forcePacked = rand.Intn(2) == 0
	defer func() { sortBudget, forcePacked = keep, false }()
	return fast, run()
}

// TestSortCompactMatchesFast: the compact path (offsets, keys read at each
// comparison, empty lines counted) gives the fast paths' output, byte for
// byte, for every flag mix, on inputs full of empty lines, duplicates,
// numbers, mixed case and fields.
func TestSortCompactMatchesFast(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	words := []string{"", "", "a", "B", "b", "10", "9", "-3", "0", "007", "x y", " 2", "a\tb", "Zz", "-0", "1.5", "abc", "é", "-1.25", "3.000001", "-0.5", "12", "1e3", " -7", "1234567890123", "0.0000001"}
	for iter := 0; iter < 1000; iter++ {
		var lines []string
		for n := rng.Intn(40); n > 0; n-- {
			l := words[rng.Intn(len(words))]
			if rng.Intn(3) == 0 {
				l += " " + words[rng.Intn(len(words))]
			}
			lines = append(lines, l)
		}
		text := strings.Join(lines, "\n")
		if rng.Intn(2) == 0 {
			text += "\n"
		}
		o := SortOptions{Reverse: rng.Intn(2) == 0, Numeric: rng.Intn(2) == 0, IgnoreCase: rng.Intn(3) == 0, Unique: rng.Intn(2) == 0}
		if rng.Intn(3) == 0 {
			o.Keys = []string{fmt.Sprint(1 + rng.Intn(2))}
			if rng.Intn(2) == 0 {
				o.Separator = " "
			}
		}
		fast, compact := sortBoth(t, text, o)
		if fast != compact {
			t.Fatalf("%+v on %q:\nfast    %q\ncompact %q", o, text, fast, compact)
		}
	}
}

// TestSortMemoryBound: sorting 16 MiB of empty lines (on f92ec3f: 1.2 GB
// for -n) allocates within three times the input plus a constant beside
// the input itself, for every order.
func TestSortMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 16 MiB")
	}
	text := strings.Repeat("\n", 16<<20)
	sb := longLineSandbox(t, 1<<16, map[string]string{"e.txt": text})
	for _, o := range []SortOptions{{}, {Numeric: true}, {IgnoreCase: true}, {Keys: []string{"1"}}, {Unique: true}, {Numeric: true, Reverse: true}} {
		o.Path, o.Sink = "e.txt", func([]byte) error { return nil }
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		r, err := Sort(context.Background(), sb, o)
		runtime.ReadMemStats(&after)
		if err != nil || r.Count == 0 {
			t.Fatalf("%+v: %v", o, err)
		}
		if got, bound := after.TotalAlloc-before.TotalAlloc, uint64(len(text)+sortBudget(len(text))); got > bound {
			t.Errorf("%+v: allocated %d MiB for 16 MiB of input, over %d MiB", o, got>>20, bound>>20)
		}
	}
}

// TestSortPackedNumericApplies: ordinary numbers take the packed path; one
// it cannot pack sends the sort elsewhere (nil).
func TestSortPackedNumericApplies(t *testing.T) {
	s := newLineSorter(SortOptions{Numeric: true}, sortKey{})
	if s.sortPackedNumeric([]byte("3\n-1.5\n\n2.000001\n"), 4) == nil {
		t.Error("ordinary numbers did not pack")
	}
	for _, bad := range []string{"1234567890123\n", "0.0000001\n", "99999999999999999999\n"} {
		if s.sortPackedNumeric([]byte(bad), 1) != nil {
			t.Errorf("%q packed", bad)
		}
	}
}
