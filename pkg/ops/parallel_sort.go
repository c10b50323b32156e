package ops

import (
	"bytes"
	"runtime"
	"slices"
	"sync"
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
