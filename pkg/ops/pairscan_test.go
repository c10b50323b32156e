package ops

import (
	"bytes"
	"math/rand"
	"testing"
)

// pairScanRef is pairScan's definition, one position at a time.
func pairScanRef(b []byte, n int, c1, c1alt, c2, c2alt byte, d int) int {
	for i := 0; i < n; i++ {
		if (b[i] == c1 || b[i] == c1alt) && (b[i+d] == c2 || b[i+d] == c2alt) {
			return i
		}
	}
	return -1
}

// TestPairScan compares the vectorised scan with the definition around
// every block edge: hits at 0, 31, 32, 33, the last position, only in the
// tail, and a second byte lying past the first's range.
func TestPairScan(t *testing.T) {
	for _, size := range []int{1, 2, 31, 32, 33, 63, 64, 65, 100, 257} {
		for _, d := range []int{1, 2, 7, 31, 32, 40} {
			n := size
			b := bytes.Repeat([]byte{'x'}, n+d)
			if got, want := pairScan(b, n, 'a', 'A', 'b', 'B', d), -1; got != want {
				t.Fatalf("size %d d %d, no hit: got %d", size, d, got)
			}
			for _, at := range []int{0, 30, 31, 32, 33, 63, 64, n - 33, n - 32, n - 31, n - 1} {
				if at < 0 || at >= n {
					continue
				}
				c := bytes.Clone(b)
				c[at], c[at+d] = "aA"[at%2], "bB"[at/2%2]
				if at+1 < n && d > 1 { // decoys: the first byte alone, just after
					c[at+1] = 'a'
				}
				if at > 0 { // and just before
					c[at-1] = 'a'
				}
				if got, want := pairScan(c, n, 'a', 'A', 'b', 'B', d), pairScanRef(c, n, 'a', 'A', 'b', 'B', d); got != want || want != at {
					t.Fatalf("size %d d %d hit at %d: got %d, want %d", size, d, at, got, want)
				}
			}
		}
	}
}

// TestIndexLitAgainstIndex runs the literal search over random text from
// a small alphabet (so pairs and near-misses are frequent) at every start,
// with and without ASCII case folding.
func TestIndexLitAgainstIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for iter := 0; iter < 400; iter++ {
		lit := make([]byte, 2+rng.Intn(6))
		for i := range lit {
			lit[i] = "abB\n_"[rng.Intn(5)]
		}
		text := make([]byte, rng.Intn(300))
		for i := range text {
			text[i] = "abAB\n_x"[rng.Intn(7)]
		}
		checkIndexLit(t, lit, text, iter%2 == 1)
	}
}

func checkIndexLit(t *testing.T, lit, text []byte, fold bool) {
	t.Helper()
	m := &litScan{lit: lit, fold: fold}
	m.rare = rarestByte(lit, fold)
	m.rareAlt = lit[m.rare]
	if fold {
		m.rareAlt = swapCase(lit[m.rare])
	}
	m.pair = len(lit) > 1
	m.pairA, m.pairB = rarePair(lit, m.rare, fold)
	for pos := 0; pos <= len(text); pos++ {
		want := -1
		for i := pos; i+len(lit) <= len(text); i++ {
			if s := text[i : i+len(lit)]; (fold && bytes.EqualFold(s, lit)) || (!fold && bytes.Equal(s, lit)) {
				want = i
				break
			}
		}
		if got := m.index(text, pos); got != want {
			t.Fatalf("indexLit(%q in %q, fold %v, from %d) = %d, want %d", lit, text, fold, pos, got, want)
		}
	}
}

func FuzzIndexLit(f *testing.F) {
	f.Add([]byte("func main"), []byte("package main\n\nfunc main() {}\n"), false)
	f.Add([]byte("ab"), bytes.Repeat([]byte("a"), 70), false)
	f.Add([]byte("zztop_needle"), []byte("x ZZTOP_needle y"), true)
	f.Fuzz(func(t *testing.T, lit, text []byte, fold bool) {
		if len(lit) < 2 || len(lit) > 64 || len(text) > 4096 || (fold && !isASCII(lit)) {
			return
		}
		checkIndexLit(t, lit, text, fold)
	})
}

// TestMultiScan checks the one-pass scan for several literals against a
// naive search, for literals of different lengths, folded or not, over
// text long enough for the vector loop and its tail.
func TestMultiScan(t *testing.T) {
	if !useSIMDPair {
		t.Skip("no AVX2: the matcher scans for each literal in turn")
	}
	rng := rand.New(rand.NewSource(9))
	for iter := 0; iter < 400; iter++ {
		var lits []litScan
		for n := 2 + rng.Intn(7); n > 0; n-- {
			lit := make([]byte, 2+rng.Intn(6))
			for i := range lit {
				lit[i] = "abAB_x"[rng.Intn(6)]
			}
			lits = append(lits, newLitScan(lit, rng.Intn(2) == 0))
		}
		ms := newMultiScan(lits)
		text := make([]byte, rng.Intn(400))
		for i := range text {
			text[i] = "abAB\n_xyz"[rng.Intn(9)]
		}
		for pos := 0; pos <= len(text); pos += 1 + rng.Intn(20) {
			want := -1
			for i := pos; i < len(text) && want < 0; i++ {
				for _, l := range lits {
					if i+len(l.lit) <= len(text) {
						s := text[i : i+len(l.lit)]
						if (l.fold && bytes.EqualFold(s, l.lit)) || (!l.fold && bytes.Equal(s, l.lit)) {
							want = i
							break
						}
					}
				}
			}
			if got := ms.index(text, pos); got != want {
				t.Fatalf("index(%+v from %d) in %q = %d, want %d", lits, pos, text, got, want)
			}
		}
	}
}
