// grep's prefilter: from the parsed pattern, the literals every match must
// contain one of, so a fast scan finds candidate lines and the regexp runs
// only on those.

package ops

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"unicode"
	"unicode/utf8"
)

// needle is a literal: its bytes compare exactly, except that when fold is
// set an ASCII letter matches either case of itself.
type needle struct {
	lit  []byte
	fold bool
}

// maxNeedles caps a literal set: past it, expanding alternatives or case
// variants is given up for a smaller requirement (or none).
const maxNeedles = 64

// litSet is what a pattern requires: every match contains at least one of
// its needles (none: no requirement). exact: the pattern matches exactly
// the strings of its needles, no more, so finding one is a match.
type litSet struct {
	needles []needle
	exact   bool
}

// requiredSet returns the literals every match of re contains one of.
func requiredSet(re *syntax.Regexp) litSet {
	if ex, ok := exactSet(re); ok && len(ex) <= maxScans {
		// A needle across a line break is found in a buffer of lines but
		// matches no line: only a candidate then.
		exact := !slices.ContainsFunc(ex, func(n needle) bool { return bytes.IndexByte(n.lit, '\n') >= 0 })
		return litSet{needles: ex, exact: exact}
	}
	switch re.Op {
	case syntax.OpCapture, syntax.OpPlus:
		return inexact(requiredSet(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return inexact(requiredSet(re.Sub[0]))
		}
	case syntax.OpLiteral:
		// A folded literal with too many case variants: its longest run
		// of runes that ASCII folding covers.
		return litSet{needles: foldSegment(re)}
	case syntax.OpAlternate:
		// Each branch's requirement; when that makes too many to scan
		// for, a folded literal's case variants give way to its longest
		// run that ASCII folding covers (one needle, confirmed by the
		// pattern): (?i)ERR_SYS|LINK_REQ_RST scans for ERR_ and _REQ_R.
		set := alternatives(re.Sub, requiredSet)
		if len(set.needles) > maxScans {
			set = alternatives(re.Sub, func(sub *syntax.Regexp) litSet {
				if sub.Op == syntax.OpLiteral && sub.Flags&syntax.FoldCase != 0 {
					if seg := foldSegment(sub); len(seg) > 0 && len(seg[0].lit) >= 3 {
						return litSet{needles: seg}
					}
				}
				return requiredSet(sub)
			})
		}
		return set
	case syntax.OpConcat:
		return bestOfConcat(re.Sub)
	}
	return litSet{}
}

func inexact(s litSet) litSet { s.exact = false; return s }

// alternatives is the union of what each branch requires (each by req);
// none when a branch requires nothing.
func alternatives(subs []*syntax.Regexp, req func(*syntax.Regexp) litSet) litSet {
	var all []needle
	for _, sub := range subs {
		s := req(sub)
		if len(s.needles) == 0 || len(all)+len(s.needles) > maxNeedles {
			return litSet{}
		}
		all = append(all, s.needles...)
	}
	return litSet{needles: dedupNeedles(all)}
}

// bestOfConcat picks the cheapest requirement among a concatenation's
// parts, where consecutive parts that each match a small set of strings
// are joined into one set (ERR_(?:SYS|IO) requires ERR_SYS or ERR_IO).
func bestOfConcat(subs []*syntax.Regexp) litSet {
	var best litSet
	consider := func(s litSet) {
		if len(s.needles) > 0 && (len(best.needles) == 0 || setCost(s.needles) < setCost(best.needles)) {
			best = litSet{needles: s.needles}
		}
	}
	for i := 0; i < len(subs); i++ {
		cur, ok := exactSet(subs[i])
		if !ok {
			consider(requiredSet(subs[i]))
			continue
		}
		// Join the run of exact parts starting here, while the product
		// stays small; every run start is tried.
		for j := i + 1; j < len(subs); j++ {
			next, ok := exactSet(subs[j])
			if !ok || len(cur)*len(next) > maxNeedles {
				break
			}
			joined, ok := product(cur, next)
			if !ok {
				break
			}
			cur = joined
		}
		consider(litSet{needles: cur})
	}
	return best
}

// exactSet returns every string re matches, as needles, when they are
// few; false when re matches more (a repetition, a large class, an
// anchor, the empty string).
func exactSet(re *syntax.Regexp) ([]needle, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			return []needle{{lit: []byte(string(re.Rune))}}, true
		}
		return foldVariants(re.Rune)
	case syntax.OpCharClass:
		n := 0
		for i := 0; i+1 < len(re.Rune); i += 2 {
			n += int(re.Rune[i+1]-re.Rune[i]) + 1
			if n > 8 {
				return nil, false
			}
		}
		if n == 0 {
			return nil, false
		}
		var out []needle
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, needle{lit: utf8.AppendRune(nil, r)})
			}
		}
		return out, true
	case syntax.OpCapture:
		return exactSet(re.Sub[0])
	case syntax.OpAlternate:
		var all []needle
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok || len(all)+len(s) > maxNeedles {
				return nil, false
			}
			all = append(all, s...)
		}
		return dedupNeedles(all), true
	case syntax.OpConcat:
		cur := []needle{{}}
		for _, sub := range re.Sub {
			s, ok := exactSet(sub)
			if !ok || len(cur)*len(s) > maxNeedles {
				return nil, false
			}
			if cur, ok = product(cur, s); !ok {
				return nil, false
			}
		}
		if slices.ContainsFunc(cur, func(n needle) bool { return len(n.lit) == 0 }) {
			return nil, false
		}
		return cur, true
	}
	return nil, false
}

// product joins every needle of a with every needle of b; false when a
// needle that folds letters would meet one whose letters do not fold
// (one needle has one rule for its letters).
func product(a, b []needle) ([]needle, bool) {
	out := make([]needle, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			xf, yf := x.fold && hasASCIILetter(x.lit), y.fold && hasASCIILetter(y.lit)
			if xf != yf && hasASCIILetter(x.lit) && hasASCIILetter(y.lit) {
				return nil, false
			}
			lit := append(append(make([]byte, 0, len(x.lit)+len(y.lit)), x.lit...), y.lit...)
			out = append(out, needle{lit: lit, fold: xf || yf})
		}
	}
	return dedupNeedles(out), true
}

func hasASCIILetter(b []byte) bool {
	for _, c := range b {
		if c|0x20 >= 'a' && c|0x20 <= 'z' {
			return true
		}
	}
	return false
}

// foldVariants spells a case-folded literal as needles that fold ASCII
// letters: one per choice of the runes that fold beyond ASCII (k and s,
// whose folds include the Kelvin sign and the long s, and every non-ASCII
// letter), while there are few.
func foldVariants(runes []rune) ([]needle, bool) {
	cur := []needle{{fold: true}}
	for _, r := range runes {
		orbit := foldOrbit(r)
		if len(cur)*len(orbit) > maxNeedles {
			return nil, false
		}
		next := make([]needle, 0, len(cur)*len(orbit))
		for _, n := range cur {
			for _, o := range orbit {
				next = append(next, needle{lit: utf8.AppendRune(slices.Clone(n.lit), o), fold: true})
			}
		}
		cur = next
	}
	for i := range cur {
		cur[i].fold = hasASCIILetter(cur[i].lit)
	}
	return dedupNeedles(cur), true
}

// foldOrbit returns the runes r matches under simple case folding, an
// ASCII letter's two cases given as one (a needle that folds covers both).
func foldOrbit(r rune) []rune {
	out := []rune{r}
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf && slices.ContainsFunc(out, func(o rune) bool { return o < utf8.RuneSelf && o|0x20 == f|0x20 }) {
			continue
		}
		out = append(out, f)
	}
	return out
}

// foldSegment is a folded literal's longest run of runes whose only folds
// are ASCII case (no k, s or non-ASCII letter), as one folded needle.
func foldSegment(re *syntax.Regexp) []needle {
	var best, cur []byte
	for _, r := range re.Rune {
		if re.Flags&syntax.FoldCase != 0 && len(foldOrbit(r)) > 1 {
			cur = cur[:0]
			continue
		}
		cur = utf8.AppendRune(cur, r)
		if len(cur) > len(best) {
			best = slices.Clone(cur)
		}
	}
	if len(best) == 0 {
		return nil
	}
	return []needle{{lit: best, fold: re.Flags&syntax.FoldCase != 0 && hasASCIILetter(best)}}
}

func dedupNeedles(ns []needle) []needle {
	out := ns[:0:0]
	for _, n := range ns {
		if !slices.ContainsFunc(out, func(o needle) bool { return o.fold == n.fold && bytes.Equal(o.lit, n.lit) }) {
			out = append(out, n)
		}
	}
	return out
}

// byteFreq estimates how often c turns up in source code and logs, from
// byteRank.
func byteFreq(c byte) float64 {
	switch r := byteRank(c); {
	case r >= 100:
		return 0.06
	case r >= 90:
		return 0.03
	case r >= 80:
		return 0.02
	case r >= 50:
		return 0.01
	case r >= 40:
		return 0.004
	}
	return 0.0005
}

// needleCost estimates the false candidates per byte a scan for n meets:
// the chance of its two rarest bytes at their distance.
func needleCost(n needle) float64 {
	f := func(c byte) float64 {
		if n.fold && swapCase(c) != c {
			return byteFreq(c) + byteFreq(swapCase(c))
		}
		return byteFreq(c)
	}
	a, b := 1.0, 1.0
	for _, c := range n.lit {
		switch p := f(c); {
		case p < a:
			a, b = p, a
		case p < b:
			b = p
		}
	}
	return a * b
}

// setCost is the scan's cost for a set: its needles' false candidates, and
// a pass over the text for each.
func setCost(ns []needle) float64 {
	c := 0.0
	for _, n := range ns {
		c += needleCost(n) + 1e-4
	}
	return c
}
