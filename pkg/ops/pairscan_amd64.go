//go:build !purego

package ops

import "golang.org/x/sys/cpu"

var useSIMDPair = cpu.X86.HasAVX2

// pairScanSIMD scans positions [0, n&^31) of p in blocks of 32 with AVX2
// and returns the first i with p[i] in {c1, c1alt} and p[i+d] in {c2,
// c2alt}, or -1. The caller guarantees p[0 : n+d] is readable.
//
//go:noescape
func pairScanSIMD(p *byte, n int, c1, c1alt, c2, c2alt byte, d int) int

// multiPairSIMD scans positions [0, n&^31) of p in blocks of 32 with AVX2
// and returns the first i where, for some entry of tab[:k], p[i+off1] is
// c1 or c1alt and p[i+off2] is c2 or c2alt; or -1. The caller guarantees
// p[0 : n+max(off2)] is readable and k >= 1.
//
//go:noescape
func multiPairSIMD(p *byte, n int, tab *pairEntry, k int) int
