// grep's confirm for patterns without a literal to scan for: a lazy DFA
// that decides whether a line matches a byte at a time, building its
// states from the regexp's program as lines need them. Go's regexp runs an
// NFA over every line (tens of MB/s); a cached transition is one table
// load per byte. The regexp stays the definition: FuzzLineDFA holds the
// two to the same answers, and it still finds where a match is (-o,
// columns) on the lines the DFA picked.

package ops

import (
	"bytes"
	"regexp/syntax"
	"slices"
	"sync"
	"unicode/utf8"
)

// lineDFA matches one compiled pattern against lines.
type lineDFA struct {
	prog  *syntax.Prog
	cache sync.Pool // *dfaCache: one per goroutine at a time
}

// dfaMaxStates bounds a cache (each state holds 1 KiB of transitions):
// past it the cache starts again, so memory stays bounded and time linear
// in the input (each byte then costs a closure over the program).
const dfaMaxStates = 2048

// dfaMaxRunes bounds a state's cached transitions on non-ASCII runes.
const dfaMaxRunes = 256

// Where a state stands after its last rune, as the empty-width assertions
// see it.
const (
	atLineStart = iota // no rune yet: ^ and \A hold
	afterWord          // an ASCII word character (\b is ASCII in RE2)
	afterOther
)

// dstate is a set of program instructions waiting for the next rune, and
// what the last rune was.
type dstate struct {
	pcs   []uint32
	prev  uint8
	ascii [utf8.RuneSelf]*dstate // built transitions; nil: not yet
	other map[rune]*dstate
	end   uint8 // whether the line matches if it ends here: 0 unknown, 1 no, 2 yes
}

// matched is where a transition leads once the line is known to match.
var matched = &dstate{}

type dfaCache struct {
	states map[string]*dstate
	start  *dstate
	// scratch for closures
	seen  []uint32 // seen[pc] == gen: visited in this closure
	gen   uint32
	stack []uint32
	runes []uint32
	key   []byte
}

func newLineDFA(re *syntax.Regexp) (*lineDFA, error) {
	prog, err := syntax.Compile(re)
	if err != nil {
		return nil, err
	}
	d := &lineDFA{prog: prog}
	d.cache.New = func() any {
		c := &dfaCache{seen: make([]uint32, len(prog.Inst))}
		c.reset()
		return c
	}
	return d, nil
}

func (c *dfaCache) reset() {
	c.states = map[string]*dstate{}
	c.start = c.intern(nil, atLineStart)
}

// intern returns the state of pcs after prev, building it once.
func (c *dfaCache) intern(pcs []uint32, prev uint8) *dstate {
	slices.Sort(pcs)
	pcs = slices.Compact(pcs)
	c.key = append(c.key[:0], prev)
	for _, pc := range pcs {
		c.key = append(c.key, byte(pc), byte(pc>>8), byte(pc>>16), byte(pc>>24))
	}
	if s, ok := c.states[string(c.key)]; ok {
		return s
	}
	if len(c.states) >= dfaMaxStates {
		c.states = map[string]*dstate{}
		c.start = nil
	}
	s := &dstate{pcs: slices.Clone(pcs), prev: prev}
	c.states[string(c.key)] = s
	if c.start == nil && prev == atLineStart && len(pcs) == 0 {
		c.start = s
	}
	return s
}

// emptyContext is what the empty-width assertions see between a rune of class
// prev and r (-1: the line's end).
func emptyContext(prev uint8, r rune) syntax.EmptyOp {
	var op syntax.EmptyOp
	if prev == atLineStart {
		op |= syntax.EmptyBeginLine | syntax.EmptyBeginText
	}
	if r < 0 {
		op |= syntax.EmptyEndLine | syntax.EmptyEndText
	}
	if (prev == afterWord) != (r >= 0 && syntax.IsWordChar(r)) {
		op |= syntax.EmptyWordBoundary
	} else {
		op |= syntax.EmptyNoWordBoundary
	}
	return op
}

// closure follows the empty transitions from s's instructions and the
// program's start (a match may begin anywhere) under op; it leaves the
// instructions that wait for a rune in c.runes and reports whether the
// program matches here.
func (c *dfaCache) closure(prog *syntax.Prog, s *dstate, op syntax.EmptyOp) bool {
	c.gen++
	if c.gen == 0 { // wrapped: clear the marks
		clear(c.seen)
		c.gen = 1
	}
	c.runes = c.runes[:0]
	c.stack = append(append(c.stack[:0], s.pcs...), uint32(prog.Start))
	found := false
	for len(c.stack) > 0 {
		pc := c.stack[len(c.stack)-1]
		c.stack = c.stack[:len(c.stack)-1]
		if c.seen[pc] == c.gen {
			continue
		}
		c.seen[pc] = c.gen
		in := &prog.Inst[pc]
		switch in.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			c.stack = append(c.stack, in.Arg, in.Out)
		case syntax.InstNop, syntax.InstCapture:
			c.stack = append(c.stack, in.Out)
		case syntax.InstEmptyWidth:
			if syntax.EmptyOp(in.Arg)&^op == 0 {
				c.stack = append(c.stack, in.Out)
			}
		case syntax.InstMatch:
			found = true
		case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
			c.runes = append(c.runes, pc)
		}
	}
	return found
}

// step builds the transition from s on r.
func (c *dfaCache) step(prog *syntax.Prog, s *dstate, r rune) *dstate {
	if c.closure(prog, s, emptyContext(s.prev, r)) {
		return matched
	}
	var next []uint32
	for _, pc := range c.runes {
		in := &prog.Inst[pc]
		var ok bool
		switch in.Op {
		case syntax.InstRuneAny:
			ok = true
		case syntax.InstRuneAnyNotNL:
			ok = r != '\n'
		default:
			ok = in.MatchRune(r)
		}
		if ok {
			next = append(next, in.Out)
		}
	}
	prev := uint8(afterOther)
	if syntax.IsWordChar(r) {
		prev = afterWord
	}
	return c.intern(next, prev)
}

// endMatches reports whether a line that ends after s matches.
func (c *dfaCache) endMatches(prog *syntax.Prog, s *dstate) bool {
	if s.end == 0 {
		s.end = 1
		if c.closure(prog, s, emptyContext(s.prev, -1)) {
			s.end = 2
		}
	}
	return s.end == 2
}

// next returns the start and end (after its newline) of the first line at
// or after pos in buf that matches, or -1, -1. A line ends at "\n", its
// body before a "\r\n", as trimEOL cuts it.
func (d *lineDFA) next(buf []byte, pos int) (int, int) {
	c := d.cache.Get().(*dfaCache)
	defer d.cache.Put(c)
	prog := d.prog
	if c.start == nil {
		c.reset()
	}
	lineStart := pos
	s := c.start
	for i := pos; i < len(buf); {
		b := buf[i]
		if b == '\n' || (b == '\r' && i+1 < len(buf) && buf[i+1] == '\n') {
			if c.endMatches(prog, s) {
				return lineStart, lineEnd(buf, i)
			}
			i = bytes.IndexByte(buf[i:], '\n') + i + 1
			lineStart, s = i, c.start
			continue
		}
		var t *dstate
		if b < utf8.RuneSelf {
			if t = s.ascii[b]; t == nil {
				t = c.step(prog, s, rune(b))
				s.ascii[b] = t
			}
			i++
		} else {
			r, w := utf8.DecodeRune(buf[i:])
			if t = s.other[r]; t == nil {
				t = c.step(prog, s, r)
				if s.other == nil {
					s.other = map[rune]*dstate{}
				}
				if len(s.other) < dfaMaxRunes {
					s.other[r] = t
				}
			}
			i += w
		}
		if t == matched {
			return lineStart, lineEnd(buf, i)
		}
		if c.start == nil { // the cache started again
			c.reset()
		}
		s = t
	}
	if lineStart < len(buf) && c.endMatches(prog, s) {
		return lineStart, len(buf)
	}
	return -1, -1
}

// lineEnd is the end of the line holding buf[i], after its newline.
func lineEnd(buf []byte, i int) int {
	if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(buf)
}

// match reports whether one line matches; it holds no "\n" (the caller
// checks).
func (d *lineDFA) match(line []byte) bool {
	if len(line) == 0 { // next sees no line in no bytes
		c := d.cache.Get().(*dfaCache)
		defer d.cache.Put(c)
		if c.start == nil {
			c.reset()
		}
		return c.endMatches(d.prog, c.start)
	}
	st, _ := d.next(line, 0)
	return st >= 0
}
