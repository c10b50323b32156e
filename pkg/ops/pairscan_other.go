//go:build !amd64 || purego

package ops

const useSIMDPair = false

func pairScanSIMD(p *byte, n int, c1, c1alt, c2, c2alt byte, d int) int { return -1 }
