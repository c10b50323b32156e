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
