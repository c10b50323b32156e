package ops

import (
	"bytes"
	"slices"
)

// pairScan returns the first i in [0, n) where b[i] is c1 or c1alt and
// b[i+d] is c2 or c2alt (the alternatives are the other case of a letter
// under -i, or the same byte again), or -1; len(b) must be at least n+d.
// A literal search scans for two of its bytes at their distance: in source
// code or logs every letter turns up every few dozen bytes, but two of them
// at a fixed distance seldom do, so the full compare runs rarely. On amd64
// with AVX2 the bulk of the range is scanned 32 positions at a time
// (pairscan_amd64.s).
func pairScan(b []byte, n int, c1, c1alt, c2, c2alt byte, d int) int {
	if n <= 0 {
		return -1
	}
	_ = b[n-1+d] // one bounds check for the loops below
	i := 0
	if useSIMDPair && n >= 32 {
		if j := pairScanSIMD(&b[0], n, c1, c1alt, c2, c2alt, d); j >= 0 {
			return j
		}
		i = n &^ 31 // the SIMD loop covered every whole block of 32
	}
	for ; i < n; i++ {
		if x, y := b[i], b[i+d]; (x == c1 || x == c1alt) && (y == c2 || y == c2alt) {
			return i
		}
	}
	return -1
}

// pairEntry is one literal's pair for multiPairSIMD: the offsets of its two
// bytes from the literal's start and each byte (and its other case, or
// itself again) repeated across a vector. The layout is the assembly's.
type pairEntry struct {
	off1, off2           int64
	_                    [16]byte
	c1, c1alt, c2, c2alt [32]byte
}

// multiScan finds the first of several literals in one pass: each
// position is tested against every literal's pair at once (multiPairSIMD),
// and a passing position is checked against the literals themselves.
type multiScan struct {
	lits   []litScan // each with its pair (pairA < pairB)
	tab    []pairEntry
	maxOff int // the largest pairB: how far past a position the scan reads
}

// newMultiScan prepares the scan; nil without AVX2 or when a literal is a
// single byte (no pair).
func newMultiScan(lits []litScan) *multiScan {
	if !useSIMDPair {
		return nil
	}
	ms := &multiScan{lits: lits}
	for _, l := range lits {
		if !l.pair {
			return nil
		}
		e := pairEntry{off1: int64(l.pairA), off2: int64(l.pairB)}
		a, b := l.lit[l.pairA], l.lit[l.pairB]
		altA, altB := a, b
		if l.fold {
			altA, altB = swapCase(a), swapCase(b)
		}
		for i := range 32 {
			e.c1[i], e.c1alt[i], e.c2[i], e.c2alt[i] = a, altA, b, altB
		}
		if !slices.Contains(ms.tab, e) {
			ms.tab = append(ms.tab, e)
		}
		ms.maxOff = max(ms.maxOff, l.pairB)
	}
	return ms
}

// index returns where the first of the literals occurs at or after pos in
// buf, or -1.
func (ms *multiScan) index(buf []byte, pos int) int {
	for pos < len(buf) {
		i := -1
		from := pos
		if n := len(buf) - ms.maxOff - pos; n >= 32 {
			if j := multiPairSIMD(&buf[pos], n, &ms.tab[0], len(ms.tab)); j >= 0 {
				i = pos + j
			} else {
				from = pos + n&^31 // every whole block of 32 was scanned
			}
		}
		if i < 0 {
			if i = ms.scalar(buf, from); i < 0 {
				return -1
			}
			return i // scalar checks the literals itself
		}
		if ms.at(buf, i) {
			return i
		}
		pos = i + 1
	}
	return -1
}

// at reports whether one of the literals starts at buf[i].
func (ms *multiScan) at(buf []byte, i int) bool {
	for k := range ms.lits {
		l := &ms.lits[k]
		if i+len(l.lit) <= len(buf) {
			if s := buf[i : i+len(l.lit)]; (!l.fold && bytes.Equal(s, l.lit)) || (l.fold && asciiEqualFold(s, l.lit)) {
				return true
			}
		}
	}
	return false
}

// scalar is index past the vector loop's reach: position by position.
func (ms *multiScan) scalar(buf []byte, from int) int {
	for i := from; i < len(buf); i++ {
		if ms.at(buf, i) {
			return i
		}
	}
	return -1
}
