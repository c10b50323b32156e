package spec

import "strings"

// Nearest is the name closest to bad by edit distance (case aside), or ""
// when none is close: at most a third of bad's length plus one edit, as
// gh and git suggest.
func Nearest(bad string, names []string) string {
	best, dist := "", len(bad)/3+2
	for _, n := range names {
		if d := editDistance(strings.ToLower(bad), strings.ToLower(n)); d < dist {
			best, dist = n, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
