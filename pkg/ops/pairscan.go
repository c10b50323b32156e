package ops

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
