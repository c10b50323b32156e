package ops

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
)

// parallelSort sorts s with cmp using up to GOMAXPROCS goroutines: the
// parts are sorted concurrently, then merged pairwise. With stable the
// result keeps equal elements in input order.
func parallelSort[T any](s []T, cmp func(a, b T) int, stable bool) {
	sortPart := slices.SortFunc[[]T, T]
	if stable {
		sortPart = slices.SortStableFunc[[]T, T]
	}
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || len(s) < 1<<14 {
		sortPart(s, cmp)
		return
	}
	for workers&(workers-1) != 0 {
		workers-- // a power of two keeps the merge tree simple
	}
	parts := make([][]T, workers)
	size := (len(s) + workers - 1) / workers
	var wg sync.WaitGroup
	for i := range parts {
		lo, hi := min(i*size, len(s)), min((i+1)*size, len(s))
		parts[i] = s[lo:hi]
		wg.Add(1)
		go func(p []T) { defer wg.Done(); sortPart(p, cmp) }(parts[i])
	}
	wg.Wait()
	buf := make([]T, len(s))
	src, dst := s, buf
	for width := size; width < len(s); width *= 2 {
		var mwg sync.WaitGroup
		for lo := 0; lo < len(s); lo += 2 * width {
			mid, hi := min(lo+width, len(s)), min(lo+2*width, len(s))
			mwg.Add(1)
			go func(lo, mid, hi int) { defer mwg.Done(); merge(dst[lo:hi], src[lo:mid], src[mid:hi], cmp) }(lo, mid, hi)
		}
		mwg.Wait()
		src, dst = dst, src
	}
	if &src[0] != &s[0] {
		copy(s, src)
	}
}

func merge[T any](dst, a, b []T, cmp func(a, b T) int) {
	i, j, k := 0, 0, 0
	for i < len(a) && j < len(b) {
		if cmp(b[j], a[i]) < 0 {
			dst[k] = b[j]
			j++
		} else {
			dst[k] = a[i]
			i++
		}
		k++
	}
	k += copy(dst[k:], a[i:])
	copy(dst[k:], b[j:])
}

// radixSortLines sorts lines in byte order: one counting pass on the first
// two bytes spreads them, in place, over 257*257 buckets (a shorter line
// first), then the buckets are sorted concurrently from their third byte on.
func radixSortLines(lines [][]byte) {
	if len(lines) < 1<<12 {
		slices.SortFunc(lines, bytesCompare)
		return
	}
	const nb = 257 * 257
	key := func(l []byte) int {
		k := 0
		if len(l) > 0 {
			k = (int(l[0]) + 1) * 257
			if len(l) > 1 {
				k += int(l[1]) + 1
			}
		}
		return k
	}
	counts := make([]int, nb+1)
	for _, l := range lines {
		counts[key(l)+1]++
	}
	for i := 1; i <= nb; i++ {
		counts[i] += counts[i-1]
	}
	starts := slices.Clone(counts)
	// Distribute in place (American flag sort): swap each line into the
	// next free slot of its bucket until the slot's own line belongs there.
	// A second slice of lines would cost as much fresh memory as the first.
	for b := 0; b < nb; b++ {
		for i := counts[b]; i < starts[b+1]; i = counts[b] {
			l := lines[i]
			for k := key(l); k != b; k = key(l) {
				lines[counts[k]], l = l, lines[counts[k]]
				counts[k]++
			}
			lines[i] = l
			counts[b]++
		}
	}
	out := lines
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	per := (len(lines) + workers - 1) / workers
	b := 0
	for w := 0; w < workers && b < nb; w++ {
		lo := b
		for b < nb && starts[b+1]-starts[lo] < per {
			b++
		}
		if w == workers-1 {
			b = nb
		} else if b < nb {
			b++
		}
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			for k := lo; k < hi; k++ {
				if bucket := out[starts[k]:starts[k+1]]; len(bucket) > 1 && k%257 != 0 {
					slices.SortFunc(bucket, func(x, y []byte) int { return bytesCompare(x[2:], y[2:]) })
				}
			}
		}(lo, b)
	}
	wg.Wait()
}

func bytesCompare(a, b []byte) int { return bytes.Compare(a, b) }

// packedLine is a line in byte order as 12 bytes: where it starts in the
// data (off), and a key (hi, lo) for its bytes from some position p on,
// the same for every line a sort compares: seven of them, zero padded,
// then how many there are, up to 8. Keys order as the lines' bytes from p
// on do, and equal keys mean equal lines, unless both have at least eight
// bytes from p on: then the bytes from p+7 on decide.
type packedLine struct{ hi, lo, off uint32 }

func (r packedLine) key() uint64 { return uint64(r.hi)<<32 | uint64(r.lo) }

// more reports whether the line goes on past the key's seven bytes.
func (r packedLine) more() bool { return r.lo&0xff == 8 }

// packAt is the packedLine of the line at off for its bytes from off+p
// on, where the line has at least p bytes. It reads at most eight bytes.
func packAt(data []byte, off uint32, p int) packedLine {
	rest := data[int(off)+p:]
	var k uint64
	n := 0
	if len(rest) >= 8 {
		w := binary.BigEndian.Uint64(rest)
		// The first newline among the eight bytes: t has the top bit of
		// each byte that is one, and no other (a carry never crosses bytes).
		const low7 = 0x7f7f7f7f7f7f7f7f
		x := w ^ 0x0a0a0a0a0a0a0a0a
		if t := ^((x&low7 + low7) | x | low7); t != 0 {
			n = bits.LeadingZeros64(t) / 8
		} else {
			n = 8
		}
		k = w & (^uint64(0) << (64 - 8*min(n, 7))) // n = 0: no byte
	} else {
		for n < len(rest) && rest[n] != '\n' {
			n++
		}
		for i := range min(n, 7) {
			k |= uint64(rest[i]) << (56 - 8*i)
		}
	}
	k |= uint64(n)
	return packedLine{uint32(k >> 32), uint32(k), off}
}

// packedSorter sorts packedLines of data in byte order: an in-place MSD
// radix sort (American flag) on the keys' bytes, small buckets by
// insertion; lines whose keys agree and go on get the key of their next
// seven bytes, so a line is read eight bytes at a time, once for each
// seven its bucket shares, and two lines are never compared whole (many
// alike lines or long shared prefixes cost no comparisons). The buckets
// over a share of the lines are split first, then GOMAXPROCS goroutines
// sort the rest at once. Equal lines are alike: each run of them ends up
// with one offset (the data stays in the cache as they go out).
type packedSorter struct{ data []byte }

// distribute spreads recs, in place, over 256 buckets by key byte d
// (0 the first); bucket b is recs[starts[b]:starts[b+1]].
func distribute(recs []packedLine, d int) (starts [257]int) {
	shift := 56 - 8*d
	var next [256]int
	for _, r := range recs {
		next[byte(r.key()>>shift)]++
	}
	sum := 0
	for b, c := range next {
		starts[b], next[b] = sum, sum
		sum += c
	}
	starts[256] = sum
	for b := range 256 {
		for i := next[b]; i < starts[b+1]; i = next[b] {
			r := recs[i]
			for k := int(byte(r.key() >> shift)); k != b; k = int(byte(r.key() >> shift)) {
				recs[next[k]], r = r, recs[next[k]]
				next[k]++
			}
			recs[i] = r
			next[b]++
		}
	}
	return starts
}

// sortFrom sorts recs, whose keys are for the lines' bytes from p on and
// agree before byte d (the lines agree before p). It goes on with the
// largest part itself and calls itself for the others (each at most half
// of the lines), so the stack stays shallow however long the lines.
func (s packedSorter) sortFrom(recs []packedLine, d, p int) {
	for len(recs) > 1 {
		if d == 8 { // the keys agree: alike lines, or more to read
			if !recs[0].more() {
				for i := range recs {
					recs[i].off = recs[0].off
				}
				return
			}
			p += 7
			for i, r := range recs {
				recs[i] = packAt(s.data, r.off, p)
			}
			d = 0
			continue
		}
		if len(recs) <= 32 {
			// By key, then each run of equal keys as above.
			for i := 1; i < len(recs); i++ {
				for j := i; j > 0 && recs[j].key() < recs[j-1].key(); j-- {
					recs[j], recs[j-1] = recs[j-1], recs[j]
				}
			}
			big := recs[:0]
			for i := 0; i < len(recs); {
				j := i + 1
				for j < len(recs) && recs[j].key() == recs[i].key() {
					j++
				}
				run := recs[i:j]
				if len(run) > len(big) {
					big, run = run, big
				}
				if len(run) > 1 {
					s.sortFrom(run, 8, p)
				}
				i = j
			}
			recs, d = big, 8
			continue
		}
		// A byte every key has (a shared prefix) moves nothing.
		shift := 56 - 8*d
		first, same := byte(recs[0].key()>>shift), true
		for _, r := range recs[1:] {
			if byte(r.key()>>shift) != first {
				same = false
				break
			}
		}
		if same {
			d++
			continue
		}
		starts := distribute(recs, d)
		big := 0
		for b := range 256 {
			if starts[b+1]-starts[b] > starts[big+1]-starts[big] {
				big = b
			}
		}
		for b := range 256 {
			if b != big && starts[b+1]-starts[b] > 1 {
				s.sortFrom(recs[starts[b]:starts[b+1]], d+1, p)
			}
		}
		recs, d = recs[starts[big]:starts[big+1]], d+1
	}
}

// sort sorts recs, keyed for their first bytes (p = 0).
func (s packedSorter) sort(recs []packedLine) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || len(recs) < 1<<14 {
		s.sortFrom(recs, 0, 0)
		return
	}
	type task struct {
		recs []packedLine
		d    int
	}
	var tasks []task
	share := len(recs) / (4 * workers)
	var split func(recs []packedLine, d int)
	split = func(recs []packedLine, d int) {
		if len(recs) <= share || d == 8 {
			tasks = append(tasks, task{recs, d})
			return
		}
		starts := distribute(recs, d)
		for b := range 256 {
			if starts[b+1]-starts[b] > 1 {
				split(recs[starts[b]:starts[b+1]], d+1)
			}
		}
	}
	split(recs, 0)
	slices.SortFunc(tasks, func(a, b task) int { return cmp.Compare(len(b.recs), len(a.recs)) })
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(tasks); i = int(next.Add(1)) - 1 {
				s.sortFrom(tasks[i].recs, tasks[i].d, 0)
			}
		}()
	}
	wg.Wait()
}
