package ops

import (
	"bytes"
	"math"
	"regexp"
	"slices"
	"strconv"
	"sync"
)

// keySpec is one GNU sort key, -k POS1[,POS2]: POS is F[.C][OPTS] with
// 1-based field F and byte C (C in POS2 of 0 or absent: the end of the
// field; POS2 absent: the end of the line).
type keySpec struct {
	sf, sc int // start field and character (sc 0: the field's first byte)
	ef, ec int // end field (0: the end of the line) and character (0: the field's end)
	// The key's own ordering options; when it has none it takes the
	// global ones (GNU).
	numeric, fold, reverse bool
	bStart, bEnd           bool // b: leading blanks of the start or end field are skipped
	own                    bool // the key named options of its own
}

// keySyntax is compiled on first use: a regexp compiled at start-up costs
// every call of every command.
var keySyntax = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^([0-9]+)(?:\.([0-9]+))?([A-Za-z]*)(?:,([0-9]+)(?:\.([0-9]+))?([A-Za-z]*))?$`)
})

// atoiClamp reads a field or character number; a number too large for an
// int means "past the end", as GNU clamps it to SIZE_MAX.
func atoiClamp(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return math.MaxInt
	}
	return n
}

// parseKeySpec reads one -k value. Options sort does not have (d, g, h, i,
// M, R, V) are usage, never ignored.
func parseKeySpec(s string) (keySpec, error) {
	m := keySyntax().FindStringSubmatch(s)
	if m == nil {
		return keySpec{}, usagef("", "invalid key %q: want F[.C][OPTS][,F[.C][OPTS]] (1-based fields, as GNU sort's keys)", s)
	}
	k := keySpec{sf: atoiClamp(m[1])}
	if k.sf < 1 {
		return keySpec{}, usagef("", "invalid key %q: fields are numbered from 1", s)
	}
	if m[2] != "" {
		if k.sc = atoiClamp(m[2]); k.sc < 1 {
			return keySpec{}, usagef("", "invalid key %q: a start character is numbered from 1", s)
		}
	}
	opts := func(o string, end bool) error {
		for _, c := range o {
			k.own = true
			switch c {
			case 'n':
				k.numeric = true
			case 'f':
				k.fold = true
			case 'r':
				k.reverse = true
			case 'b':
				if end {
					k.bEnd = true
				} else {
					k.bStart = true
				}
			default:
				return usagef("", "invalid key %q: the key option %q is not supported (n, f, r and b are)", s, string(c))
			}
		}
		return nil
	}
	if err := opts(m[3], false); err != nil {
		return keySpec{}, err
	}
	if m[4] != "" {
		if k.ef = atoiClamp(m[4]); k.ef < 1 {
			return keySpec{}, usagef("", "invalid key %q: fields are numbered from 1", s)
		}
		if m[5] != "" {
			k.ec = atoiClamp(m[5])
		}
		if err := opts(m[6], true); err != nil {
			return keySpec{}, err
		}
	}
	return k, nil
}

// simple reports whether a key is what the fast paths handle: whole
// fields, no options of its own.
func (k keySpec) simple() bool {
	return !k.own && k.sc == 0 && k.ec == 0
}

// fieldStart is where field f (1-based) of line starts, or len(line) when
// it has fewer fields: after f-1 separators, or (no separator) at the
// blanks before the f-th run of non-blanks (GNU: they belong to it).
func fieldStart(line []byte, sep string, f int) int {
	pos := 0
	for n := 1; n < f; n++ {
		if sep != "" {
			i := bytes.IndexByte(line[pos:], sep[0])
			if i < 0 {
				return len(line)
			}
			pos += i + 1
			continue
		}
		for pos < len(line) && isBlank(line[pos]) {
			pos++
		}
		for pos < len(line) && !isBlank(line[pos]) {
			pos++
		}
		if pos == len(line) {
			return pos
		}
	}
	return pos
}

// fieldEnd is where field f, starting at start, ends.
func fieldEnd(line []byte, sep string, start int) int {
	if sep != "" {
		if i := bytes.IndexByte(line[start:], sep[0]); i >= 0 {
			return start + i
		}
		return len(line)
	}
	pos := start
	for pos < len(line) && isBlank(line[pos]) {
		pos++
	}
	for pos < len(line) && !isBlank(line[pos]) {
		pos++
	}
	return pos
}

func skipBlanks(line []byte, pos int) int {
	for pos < len(line) && isBlank(line[pos]) {
		pos++
	}
	return pos
}

// extract is the key's bytes in line, as GNU sort's begfield/limfield
// find them.
func (k keySpec) extract(line []byte, sep string) []byte {
	start := fieldStart(line, sep, k.sf)
	if k.bStart {
		start = skipBlanks(line, start)
	}
	if k.sc > 0 {
		start = min(start+k.sc-1, len(line))
	}
	end := len(line)
	if k.ef > 0 {
		fs := fieldStart(line, sep, k.ef)
		if k.ec == 0 {
			end = fieldEnd(line, sep, fs)
		} else {
			if k.bEnd {
				fs = skipBlanks(line, fs)
			}
			end = min(fs+k.ec, len(line))
		}
	}
	if end < start {
		return nil
	}
	return line[start:end]
}

// keysSorter sorts by several keys (or keys with options of their own,
// character positions, -s): each key in turn, then, unless -s or -u, the
// whole line (GNU's last resort), which the global -r reverses.
type keysSorter struct {
	o    SortOptions
	keys []keySpec
}

func (s *keysSorter) compareKeys(a, b []byte) int {
	for _, k := range s.keys {
		ka, kb := k.extract(a, s.o.Separator), k.extract(b, s.o.Separator)
		numeric, fold, reverse := k.numeric, k.fold, k.reverse
		if !k.own {
			numeric, fold, reverse = s.o.Numeric, s.o.IgnoreCase, s.o.Reverse
		}
		var c int
		switch {
		case numeric:
			c = numCompare(ka, kb)
		case fold:
			c = foldCompare(ka, kb)
		default:
			c = bytes.Compare(ka, kb)
		}
		if reverse {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// sortData sorts data's lines by offset: 4 bytes a line of at least two
// bytes, and the empty lines (all alike) as one entry standing for all of
// them, as the compact path does, so memory stays within sortBudget.
// Equal lines keep input order. data is under 4 GiB (Sort checks).
func (s *keysSorter) sortData(data []byte) func(yield func([]byte) bool) {
	var offs []uint32
	empties, firstEmpty := 0, -1
	for off := 0; off < len(data); {
		l := nextLine(data, off)
		if l[0] == '\n' {
			empties++
			if firstEmpty >= 0 {
				off += len(l)
				continue
			}
			firstEmpty = off
		}
		offs = append(offs, uint32(off))
		off += len(l)
	}
	line := func(off uint32) []byte { return lineAt(data, off) }
	slices.SortStableFunc(offs, func(x, y uint32) int {
		a, b := line(x), line(y)
		if c := s.compareKeys(a, b); c != 0 || s.o.Stable || s.o.Unique {
			return c
		}
		c := bytes.Compare(a, b)
		if s.o.Reverse {
			c = -c
		}
		return c
	})
	return func(yield func([]byte) bool) {
		for _, off := range offs {
			times := 1
			if int(off) == firstEmpty {
				times = empties
			}
			for range times {
				if !yield(line(off)) {
					return
				}
			}
		}
	}
}
