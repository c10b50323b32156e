package ops

import (
	"runtime"
	"slices"
	"sync"
)

// parallelSort sorts s with cmp using up to GOMAXPROCS goroutines: the
// parts are sorted concurrently, then merged pairwise. The result is the
// same as a stable sort of s.
func parallelSort[T any](s []T, cmp func(a, b T) int) {
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || len(s) < 1<<14 {
		slices.SortStableFunc(s, cmp)
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
		go func(p []T) { defer wg.Done(); slices.SortStableFunc(p, cmp) }(parts[i])
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
