//go:build !amd64 || purego

package ops

const useSIMDPair = false

func pairScanSIMD(p *byte, n int, c1, c1alt, c2, c2alt byte, d int) int { return -1 }

func multiPairSIMD(p *byte, n int, tab *pairEntry, k int) int { return -1 }
