// grep's Perl classes: \w, \d and \s are Unicode, as ripgrep's are and GNU
// grep's in a UTF-8 locale, where RE2 (Go's regexp) makes them ASCII. The
// pattern is rewritten before it is compiled; [[:word:]]-style classes stay
// ASCII, and \b and \B stay ASCII (Go's engine decides them).

package ops

import (
	"fmt"
	"regexp/syntax"
	"strings"
	"sync"
)

// Unicode's word characters (UTS #18: alphabetic, marks, decimal digits,
// connector punctuation, the joiners), its white space (the White_Space
// property) and its decimal digits, as RE2 class items.
const (
	wordItems  = `\p{L}\p{Nl}\p{M}\p{Nd}\p{Pc}\x{200C}\x{200D}`
	spaceItems = `\t-\r \x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}`
	digitItems = `\p{Nd}`
)

// negatedItems spells the complement of items as ranges, for a negated
// class inside brackets ([^\W] has no other spelling in RE2).
var negatedItems = sync.OnceValue(func() map[byte]string {
	out := map[byte]string{}
	for c, items := range map[byte]string{'W': wordItems, 'S': spaceItems} {
		re, err := syntax.Parse(`[^`+items+`]`, syntax.Perl)
		if err != nil {
			panic(err) // the constants above are valid
		}
		var b strings.Builder
		for i := 0; i+1 < len(re.Rune); i += 2 {
			fmt.Fprintf(&b, `\x{%X}`, re.Rune[i])
			if re.Rune[i+1] != re.Rune[i] {
				fmt.Fprintf(&b, `-\x{%X}`, re.Rune[i+1])
			}
		}
		out[c] = b.String()
	}
	return out
})

// unicodeClasses rewrites \w \W \d \D \s \S in an RE2 pattern as their
// Unicode classes, in brackets or out; everything else is copied as it is
// (escapes, \Q...\E, [[:word:]]). An invalid pattern stays invalid.
func unicodeClasses(expr string) string {
	if !strings.ContainsAny(expr, `\`) {
		return expr
	}
	var b strings.Builder
	inClass := false
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch {
		case c == '\\' && i+1 < len(expr):
			e := expr[i+1]
			i++
			if e == 'Q' {
				// A quoted run: copied to its \E (or the end).
				end := strings.Index(expr[i+1:], `\E`)
				if end < 0 {
					b.WriteString(expr[i-1:])
					return b.String()
				}
				b.WriteString(expr[i-1 : i+1+end+2])
				i += end + 2
				continue
			}
			items, neg := perlItems(e)
			switch {
			case items == "":
				b.WriteByte('\\')
				b.WriteByte(e)
			case e == 'd':
				b.WriteString(digitItems)
			case e == 'D':
				b.WriteString(`\P{Nd}`)
			case inClass && neg:
				b.WriteString(negatedItems()[e])
			case inClass:
				b.WriteString(items)
			case neg:
				b.WriteString(`[^` + items + `]`)
			default:
				b.WriteString(`[` + items + `]`)
			}
		case c == '[' && !inClass:
			inClass = true
			b.WriteByte(c)
			// A ']' first (after an optional '^') is a member.
			if i+1 < len(expr) && expr[i+1] == '^' {
				b.WriteByte('^')
				i++
			}
			if i+1 < len(expr) && expr[i+1] == ']' {
				b.WriteByte(']')
				i++
			}
		case c == '[' && inClass && strings.HasPrefix(expr[i:], "[:"):
			// [:name:] inside a class: copied whole.
			end := strings.Index(expr[i+2:], ":]")
			if end < 0 {
				b.WriteByte(c)
				continue
			}
			b.WriteString(expr[i : i+2+end+2])
			i += 2 + end + 1
		case c == ']' && inClass:
			inClass = false
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// perlItems returns the Unicode class items for a Perl class letter, and
// whether the letter is the negated one; "" for any other letter.
func perlItems(e byte) (string, bool) {
	switch e {
	case 'w', 'W':
		return wordItems, e == 'W'
	case 's', 'S':
		return spaceItems, e == 'S'
	case 'd', 'D':
		return digitItems, e == 'D'
	}
	return "", false
}
