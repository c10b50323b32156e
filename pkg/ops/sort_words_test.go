package ops

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// syllableWords is the first size bytes of the bench's
// syllables-100MiB.txt (internal/bench, genSyllables, whose comment says
// more): short pronounceable words, one a line, many repeated and sharing
// prefixes (14.4 M lines, 4.6 M distinct in 100 MiB), the data of the
// issue where sort was 4× slower than GNU's.
func syllableWords(size int) []byte {
	common := []string{"ka", "ro", "tion", "ing", "ber", "an", "el", "mi", "sto", "pre", "la", "ne", "ter", "con", "ver", "al", "er", "in", "re", "ma"}
	syl := slices.Clone(common)
	for _, c := range []string{"", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "st", "pr", "tr", "br", "ch", "sh", "th", "gr", "pl", "qu"} {
		for _, v := range []string{"a", "e", "i", "o", "u", "y"} {
			syl = append(syl, c+v)
		}
	}
	const vocab = 8_000_000
	base := uint64(len(syl))
	counts := []uint64{base * base, 6_400_000}
	seed := uint64(0x5eed07)
	intn := func(n int) int { // the bench's rng: splitmix64
		seed += 0x9e3779b97f4a7c15
		z := seed
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		z ^= z >> 31
		return int((z >> 32) * uint64(n) >> 32)
	}
	b := make([]byte, 0, size+16)
	for {
		start := len(b)
		rank := uint64(intn(vocab))
		if intn(100) < 55 {
			rank = uint64(intn(min(1<<intn(24), vocab)))
		}
		x, n, combos := rank, 2, base*base
		for _, c := range counts {
			if x < c {
				break
			}
			x, n, combos = x-c, n+1, combos*base
		}
		x = x * 0x9e3779b1 % combos
		for range n {
			b = append(b, syl[x%base]...)
			x /= base
		}
		if len(b)-start > 12 {
			b = b[:start+12]
		}
		for len(b)-start < 4 {
			b = append(b, 'a')
		}
		if b = append(b, '\n'); len(b) >= size {
			b = append(b[:size-1], '\n') // as the bench's writeLines cuts the last line
			return b
		}
	}
}

// BenchmarkSortWords sorts 100 MiB of syllableWords in byte order, as fsbox sort --format text does; the
// size matters, as sortBudget's constant decides the path at small ones.
// FSBOX_SORT_WORDS names a file to sort instead.
func BenchmarkSortWords(b *testing.B) {
	var data []byte
	if p := os.Getenv("FSBOX_SORT_WORDS"); p != "" {
		var err error
		if data, err = os.ReadFile(p); err != nil {
			b.Fatal(err)
		}
	} else {
		data = syllableWords(100 << 20)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "w.txt"), data, 0o644); err != nil {
		b.Fatal(err)
	}
	p := sandbox.DefaultPolicy(dir)
	p.Limits.MaxSortBytes = 1 << 30
	sb, err := sandbox.New(p, "")
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for range b.N {
		n := 0
		r, err := Sort(context.Background(), sb, SortOptions{Path: "w.txt", Exact: true, Sink: func(l []byte) error { n += len(l); return nil }})
		if err != nil || n != len(data) {
			b.Fatal(err, n, r.Count)
		}
	}
}

// TestSortSyllableWords: 4 MiB of the words (many alike lines,
// shared prefixes) sort as slices.Sort has them, also with -r and -u.
func TestSortSyllableWords(t *testing.T) {
	data := syllableWords(4 << 20)
	lines := strings.Split(string(data[:len(data)-1]), "\n")
	slices.Sort(lines)
	for _, o := range []SortOptions{{}, {Reverse: true, Unique: true}} {
		want := slices.Clone(lines)
		if o.Unique {
			want = slices.Compact(want)
		}
		if o.Reverse {
			slices.Reverse(want)
		}
		if got := sortText(t, string(data), o); got != strings.Join(want, "\n")+"\n" {
			t.Errorf("%+v: output differs from the sorted lines", o)
		}
	}
}
