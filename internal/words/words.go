// Package words generates the data shape that hid sort's slowdown on many
// short lines: short pronounceable words, one a line, many repeated and
// sharing prefixes. The bench writes 100 MiB of it (syllables-100MiB.txt)
// and pkg/ops's sort tests and benchmark take its first bytes: one
// generator, so both see the same bytes.
package words

// Syllables yields one word a line: 2 to 4 syllables (4 to 12 letters,
// 6.3 on average), the word of a rank drawn from a vocabulary of 8 M,
// often log-uniformly (Zipf-like: low ranks, the short words, come often),
// else uniformly. Integer arithmetic only, so every machine writes the
// same bytes.
type Syllables struct {
	syl    []string
	base   uint64
	counts []uint64 // how many ranks the words of 2 and of 3 syllables take; the rest have 4
	s      uint64   // splitmix64's state
}

const vocab = 8_000_000

// NewSyllables returns the generator at its start.
func NewSyllables() *Syllables {
	syl := []string{"ka", "ro", "tion", "ing", "ber", "an", "el", "mi", "sto", "pre", "la", "ne", "ter", "con", "ver", "al", "er", "in", "re", "ma"}
	for _, c := range []string{"", "b", "c", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "w", "z", "st", "pr", "tr", "br", "ch", "sh", "th", "gr", "pl", "qu"} {
		for _, v := range []string{"a", "e", "i", "o", "u", "y"} {
			syl = append(syl, c+v)
		}
	}
	base := uint64(len(syl))
	return &Syllables{syl: syl, base: base, counts: []uint64{base * base, 6_400_000}, s: 0x5eed07}
}

// intn is splitmix64 scaled to [0, n).
func (g *Syllables) intn(n int) int {
	g.s += 0x9e3779b97f4a7c15
	z := g.s
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return int((z >> 32) * uint64(n) >> 32)
}

// Append appends the next word and its newline to b.
func (g *Syllables) Append(b []byte) []byte {
	rank := uint64(g.intn(vocab))
	if g.intn(100) < 55 {
		rank = uint64(g.intn(min(1<<g.intn(24), vocab)))
	}
	x, n, combos := rank, 2, g.base*g.base
	for _, c := range g.counts {
		if x < c {
			break
		}
		x, n, combos = x-c, n+1, combos*g.base
	}
	// A bijection of [0, combos), so that the words of n syllables use
	// every syllable in every place; then x's digits in base len(syl) are
	// the syllables.
	x = x * 0x9e3779b1 % combos
	start := len(b)
	for range n {
		b = append(b, g.syl[x%g.base]...)
		x /= g.base
	}
	if len(b)-start > 12 {
		b = b[:start+12]
	}
	for len(b)-start < 4 {
		b = append(b, 'a')
	}
	return append(b, '\n')
}

// Bytes are the first size bytes of the stream, the last line cut to fit
// and still ending in a newline (as the bench cuts its file).
func Bytes(size int) []byte {
	g := NewSyllables()
	b := make([]byte, 0, size+16)
	for len(b) < size {
		b = g.Append(b)
	}
	return append(b[:size-1], '\n')
}
