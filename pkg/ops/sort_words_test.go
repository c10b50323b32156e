package ops

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/internal/words"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// syllableWords is the first size bytes of the bench's
// syllables-100MiB.txt (package words): short pronounceable words, one a
// line, many repeated and sharing prefixes (14.4 M lines, 4.6 M distinct
// in 100 MiB), the data of the issue where sort was 4× slower than GNU's.
func syllableWords(size int) []byte { return words.Bytes(size) }

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
	p := policy.DefaultPolicy(dir)
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
