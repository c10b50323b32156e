package ops

import "slices"

// acMatcher finds every occurrence of many patterns in one pass over a
// text (Aho-Corasick): several edits are matched in time linear in the
// text plus their patterns plus what they match, where one scan per edit
// cost the number of edits times the text (3,000 edits over 4 MiB: 14 s).
type acMatcher struct {
	root  [256]int32       // the root's transitions (0: stay at the root)
	edges map[uint64]int32 // state<<8 | byte -> state, below the root
	fail  []int32          // the longest proper suffix that is a state
	dict  []int32          // the nearest state on the fail chain that ends a pattern, -1
	out   [][]int32        // the patterns ending at a state
	depth []int32
}

func newACMatcher(pats [][]byte) *acMatcher {
	m := &acMatcher{edges: map[uint64]int32{}, fail: []int32{0}, dict: []int32{-1}, out: [][]int32{nil}, depth: []int32{0}}
	for i, p := range pats {
		s := int32(0)
		for _, c := range p {
			t := m.step(s, c)
			if t == 0 {
				t = int32(len(m.fail))
				m.fail, m.dict, m.out = append(m.fail, 0), append(m.dict, -1), append(m.out, nil)
				m.depth = append(m.depth, m.depth[s]+1)
				if s == 0 {
					m.root[c] = t
				} else {
					m.edges[uint64(s)<<8|uint64(c)] = t
				}
			}
			s = t
		}
		m.out[s] = append(m.out[s], int32(i))
	}
	// Breadth first: a state's fail link is found from its parent's.
	queue := make([]int32, 0, len(m.fail))
	for c := range 256 {
		if t := m.root[c]; t != 0 {
			queue = append(queue, t)
		}
	}
	children := map[int32][]struct {
		c byte
		t int32
	}{}
	for k, t := range m.edges {
		s := int32(k >> 8)
		children[s] = append(children[s], struct {
			c byte
			t int32
		}{byte(k), t})
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, ch := range children[s] {
			f := m.fail[s]
			for f != 0 && m.step(f, ch.c) == 0 {
				f = m.fail[f]
			}
			m.fail[ch.t] = m.step(f, ch.c)
			queue = append(queue, ch.t)
		}
		if f := m.fail[s]; len(m.out[f]) > 0 {
			m.dict[s] = f
		} else {
			m.dict[s] = m.dict[f]
		}
	}
	return m
}

// step is the transition from s on c, 0 when there is none (the root's
// missing transitions lead back to the root).
func (m *acMatcher) step(s int32, c byte) int32 {
	if s == 0 {
		return m.root[c]
	}
	return m.edges[uint64(s)<<8|uint64(c)]
}

// maxEditMatches bounds the occurrences several edits may produce while
// they are matched (every occurrence, overlapping ones included): past it
// the edits are refused (too_large) rather than counted without end.
func maxEditMatches(textLen int) int { return 8*textLen + 1<<20 }

// matchMany counts, for each pattern, its occurrences as bytes.Index
// scanning from the left without overlap would find them. When spans is
// set it also lists their starts (packed start<<16 | pattern, sorted), in
// memory bounded by the text, not by the occurrences: while no two
// occurrences of different patterns share a byte, it lists every one (at
// most one per byte of the text); once two do, only those that start no
// later than the later start of the two. Those are every occurrence up
// to the first overlap in order of position, which is all an edit set
// needs to name the overlap (applySpans): the later ones are counted,
// never held. (The list used to keep every occurrence the budget allows:
// 3,000 edits matching each byte of a 4 MiB text 8 times over held 34M of
// them, 1 GiB at its peak.) It reports false when the occurrences pass
// maxEditMatches.
func matchMany(text []byte, pats [][]byte, wantSpans bool) (counts []int, spans []uint64, ok bool) {
	m := newACMatcher(pats)
	counts = make([]int, len(pats))
	lastEnd := make([]int, len(pats))
	budget := maxEditMatches(len(text))
	// Occurrences arrive in order of where they end: one overlaps an
	// earlier one exactly when it starts before the furthest end so far
	// (that of the one starting at far). Before the first overlap the
	// kept ones are disjoint, at most one per byte. The first overlap in
	// order of position is at a start no later than cut, the later start
	// of the first pair found; every occurrence found after that pair
	// ends at or after the pair's ends, so one starting no later than cut
	// holds byte cut, and each pattern's counted occurrences are
	// disjoint: at most one more per pattern.
	maxEnd, far, cut := 0, 0, -1
	// The occurrences, in order of where they end (the scan is inline:
	// a budget of them can be tens of millions).
	s := int32(0)
	for i, c := range text {
		for {
			if t := m.step(s, c); t != 0 || s == 0 {
				s = t
				break
			}
			s = m.fail[s]
		}
		for o := s; o > 0; o = m.dict[o] {
			ps := m.out[o]
			if len(ps) == 0 {
				continue
			}
			start, end := i+1-int(m.depth[o]), i+1
			for _, p := range ps {
				if budget--; budget < 0 {
					return counts, nil, false
				}
				if start < lastEnd[p] {
					continue // inside this pattern's previous occurrence
				}
				counts[p]++
				lastEnd[p] = end
				if !wantSpans {
					continue
				}
				if cut < 0 && start < maxEnd {
					cut = max(start, far)
				}
				if end > maxEnd {
					maxEnd, far = end, start
				}
				if cut < 0 || start <= cut {
					if len(spans) == cap(spans) {
						// Doubled, not append's quarter: a list of millions
						// is copied a few times, not dozens.
						spans = slices.Grow(spans, max(len(spans), 64))
					}
					spans = append(spans, uint64(start)<<16|uint64(p))
				}
			}
		}
	}
	slices.Sort(spans)
	return counts, spans, true
}
