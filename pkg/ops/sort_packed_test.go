package ops

import (
	"bytes"
	"context"
	"math/rand"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// packedInput is n random lines over an alphabet with the bytes around
// the newline, NUL, high bytes and long shared prefixes, so that keys tie,
// lines run past a key's seven bytes, and some differ only in length.
func packedInput(rng *rand.Rand, n int) string {
	alpha := []byte{0, 1, '\t', 0x0b, 0x09 ^ 0x80, 'a', 'b', 0x7f, 0x80, 0x8a, 0xff}
	prefixes := []string{"", "a", "abcdefg", "abcdefgh", "abcdefghijklmno", strings.Repeat("z", 30), "\x00\x00\x00\x00\x00\x00\x00"}
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(prefixes[rng.Intn(len(prefixes))])
		for k := rng.Intn(12); k > 0; k-- {
			b.WriteByte(alpha[rng.Intn(len(alpha))])
		}
		if i < n-1 || rng.Intn(2) == 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// TestSortPackedBytes: byte order's packed path gives LC_ALL=C sort's
// output (a plain sort of the lines) with -r and -u, for small inputs and
// for ones big enough to be split among several goroutines.
func TestSortPackedBytes(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 300; iter++ {
		n := rng.Intn(80)
		if iter%50 == 0 {
			n = 40_000 + rng.Intn(20_000)
		}
		text := packedInput(rng, n)
		lines := strings.SplitAfter(text, "\n")
		if lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		for i, l := range lines {
			lines[i] = strings.TrimSuffix(l, "\n")
		}
		slices.Sort(lines)
		for _, o := range []SortOptions{{}, {Reverse: true}, {Unique: true}, {Unique: true, Reverse: true}} {
			want := slices.Clone(lines)
			if o.Unique {
				want = slices.Compact(want)
			}
			if o.Reverse {
				slices.Reverse(want)
			}
			wantText := strings.Join(want, "\n")
			if len(want) > 0 {
				wantText += "\n"
			}
			s := newLineSorter(o, sortKey{})
			if !s.plain() || 12*n > sortBudget(len(text)) {
				t.Fatalf("%+v: not the packed path", o)
			}
			got := sortText(t, text, o)
			if got != wantText {
				t.Fatalf("%+v on %d lines %q:\ngot  %q\nwant %q", o, n, trimQ(text), trimQ(got), trimQ(wantText))
			}
		}
	}
}

// sortText is Sort's text output for text.
func sortText(t *testing.T, text string, o SortOptions) string {
	t.Helper()
	s := longLineSandbox(t, 1<<20, map[string]string{"in.txt": text})
	var b bytes.Buffer
	o.Path, o.Exact = "in.txt", true
	o.Sink = func(l []byte) error { b.Write(l); return nil }
	if _, err := Sort(context.Background(), s, o); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func trimQ(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// TestPackAt: a key holds up to seven bytes and how many there are (up
// to 8), stopping at the first newline, also when a byte just above the
// newline's value comes first.
func TestPackAt(t *testing.T) {
	for _, c := range []struct {
		data string
		key  uint64
	}{
		{"\x0b\nxxxxxxxxx", 0x0b00000000000001},
		{"\x0b\x0b\n\x0b\x0b\x0b\x0b\x0b", 0x0b0b000000000002},
		{"abcdefgh\n", 0x6162636465666708},
		{"abcdefg\nzz", 0x6162636465666707},
		{"abc", 0x6162630000000003},
		{"\n", 0},
		{"ab\x00\n", 0x6162000000000003},
	} {
		if got := packAt([]byte(c.data), 0, 0).key(); got != c.key {
			t.Errorf("%q: key %#x, want %#x", c.data, got, c.key)
		}
	}
}

// TestSortPackedLongLines: long lines alike but for their last byte, and
// many lines behind one long shared prefix, are read seven bytes at a
// time without the stack growing with them.
func TestSortPackedLongLines(t *testing.T) {
	long := strings.Repeat("a", 3<<20)
	var lines []string
	for _, end := range "cbacb" {
		lines = append(lines, long+string(end))
	}
	prefix := strings.Repeat("p", 200)
	rng := rand.New(rand.NewSource(3))
	for i := 0; i < 30_000; i++ {
		lines = append(lines, prefix+strings.Repeat("q", rng.Intn(20)))
	}
	text := strings.Join(lines, "\n") + "\n"
	slices.Sort(lines)
	if got := sortText(t, text, SortOptions{}); got != strings.Join(lines, "\n")+"\n" {
		t.Error("output differs from the sorted lines")
	}
}
