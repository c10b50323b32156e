package ops

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

var sortOp = &spec.Op{
	Name: "sort", Class: spec.Read, Result: SortResult{}, Limit: "max_sort_bytes",
	Streams: true,
	Pages:   true,
	Summary: "sort a file's lines (byte order, as LC_ALL=C sort)",
	Help:    "Sorts a file's lines in byte order, as LC_ALL=C sort does; the sort is stable. Files over max_sort_bytes are refused.",
	Args:    []spec.Arg{stdinArg("the file to sort")},
	Options: []spec.Option{
		{Name: "reverse", Short: "r", Type: spec.Bool, Help: "reverse the order"},
		{Name: "numeric", Short: "n", Type: spec.Bool, Help: "compare leading numbers, as sort -n"},
		{Name: "human-numeric", Short: "h", Type: spec.Bool, CLIOnly: true, Help: "GNU sort -h; refused (usage): fsbox does not compare SI suffixes"},
		{Name: "ignore-case", Short: "f", Type: spec.Bool, Help: "fold lower case to upper case (ASCII)"},
		{Name: "unique", Short: "u", Type: spec.Bool, Help: "keep the first of lines with equal keys"},
		{Name: "key", Short: "k", Type: spec.Strings, Meta: "POS1[,POS2]", Help: "sort on a key, as GNU sort -k (repeatable: the first key decides, then the next): POS is F[.C][OPTS], field F and byte C 1-based, OPTS from n, f, r, b; without POS2 the key runs to the line's end"},
		{Name: "stable", Short: "s", Type: spec.Bool, Help: "keep lines with equal keys in input order (no last-resort whole-line comparison)"},
		{Name: "separator", Short: "t", Type: spec.String, Meta: "SEP", DefaultText: "blanks", Help: "field separator for key"},
	},
	Examples: []spec.Example{{Cmd: "sort -u notes.txt --format text", Says: "the distinct lines, sorted"}},
	Text:     "the sorted lines, each ended by a newline, as GNU sort",
	Run: func(ctx context.Context, sb *sandbox.Sandbox, in *spec.Input) (spec.Result, error) {
		o, err := SortInput(in)
		if err != nil {
			return nil, err
		}
		o.Sink = lineSink(in.Sink)
		o.Exact = in.Exact
		if o.Paging, err = pagingOf(sb, in); err != nil {
			return nil, err
		}
		return Sort(ctx, sb, o)
	},
}

// SortInput turns a sort input into options.
func SortInput(in *spec.Input) (SortOptions, error) {
	o := SortOptions{Path: in.String("path"), Reverse: in.Bool("reverse"), Numeric: in.Bool("numeric"),
		IgnoreCase: in.Bool("ignore-case"), Unique: in.Bool("unique"), Keys: in.Strings("key"), Stable: in.Bool("stable"), Separator: in.String("separator")}
	if in.IsSet("separator") && o.Separator == "" {
		return o, usageErr("separator must not be empty")
	}
	if in.Bool("human-numeric") {
		return o, fserr.Errorf(fserr.CodeUsage, "", "human-numeric sort (GNU's) is not supported:").WithHint(fserr.Hint{Option: "numeric", Short: true, Text: "%s compares plain numbers"})
	}
	return o, nil
}

// SortOptions are sort's inputs.
type SortOptions struct {
	Path       string
	Reverse    bool // -r
	Numeric    bool // -n, as GNU sort -n
	IgnoreCase bool // -f, fold lower case to upper
	Unique     bool // -u, first of each run of equal keys
	// Keys are GNU sort's -k POS1[,POS2], in order: POS is F[.C][OPTS],
	// OPTS from n, f, r, b (a key with none takes the global ones).
	Keys      []string
	Stable    bool   // -s: equal keys keep input order (no last-resort comparison)
	Separator string // -t: field separator (default: blank-to-non-blank transitions, as GNU)
	Sink      LineSink
	Exact     bool // lines go out whole (the text form), not cut at max_line_bytes
	// Paging: a page gives the sorted lines after the first From.N (its
	// position is the number of lines given so far).
	Paging
}

// SortResult holds the sorted lines.
type SortResult struct {
	Path  string   `json:"path"`
	Lines []string `json:"lines" fsbox:"items"`
	Count int64    `json:"count"` // the lines on this page
	Truncation
}

// Sort sorts a file's lines in byte order (as LC_ALL=C sort). Keys that
// compare equal fall back to comparing whole lines, as GNU sort does
// without -s; -r reverses both. The whole file is held in memory, so a file
// over max_sort_bytes is too_large.
func Sort(ctx context.Context, sb *sandbox.Sandbox, o SortOptions) (SortResult, error) {
	if err := begin(ctx, sb, "sort"); err != nil {
		return SortResult{}, err
	}
	var specs []keySpec
	for _, k := range o.Keys {
		spec, err := parseKeySpec(k)
		if err != nil {
			return SortResult{}, err
		}
		specs = append(specs, spec)
	}
	general := len(specs) > 1 || (len(specs) == 1 && !specs[0].simple()) || o.Stable
	var key sortKey
	if len(specs) == 1 && !general {
		key = sortKey{first: specs[0].sf, last: specs[0].ef}
	}
	if len(o.Separator) > 1 && o.Separator != `\0` {
		return SortResult{}, usagef(o.Path, "separator must be one character, got %q", o.Separator)
	}
	if o.Separator == `\0` {
		o.Separator = "\x00"
	}
	f, err := openInput(sb, o.Path)
	if err != nil {
		return SortResult{}, err
	}
	defer f.Close()
	limit, limitName := holdLimit(sb.Limits().MaxSortBytes, "max_sort_bytes")
	if f.Info.Size > limit {
		return SortResult{}, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Path: o.Path,
			Msg: fmt.Sprintf("%s has %d bytes, over %s = %d", o.Path, f.Info.Size, limitName, limit)}
	}
	data := make([]byte, 0, max(f.Info.Size, 0)+1) // standard input's size is unknown (-1)
	data, err = readAllInto(io.LimitReader(textio.WithContext(ctx, f), satAdd(limit, 1)), data)
	if err != nil {
		return SortResult{}, fserr.AsError(err)
	}
	if int64(len(data)) > limit {
		return SortResult{}, fserr.Errorf(fserr.CodeTooLarge, o.Path, "%s grew past %s = %d while being read", o.Path, limitName, limit)
	}
	sorter := newLineSorter(o, key)
	keyCompare := sorter.keyCompare
	var each func(yield func([]byte) bool)
	if general {
		if len(data) >= 1<<32 {
			return SortResult{}, fserr.Errorf(fserr.CodeTooLarge, o.Path, "%s has %d bytes: sort with several keys, key options or stable holds at most 4 GiB", o.Path, len(data))
		}
		ks := &keysSorter{o: o, keys: specs}
		keyCompare = ks.compareKeys
		each = ks.sortData(data)
	} else {
		each = sorter.sortData(data)
	}
	if err := ctx.Err(); err != nil {
		return SortResult{}, err
	}

	res := SortResult{Path: f.Info.Path}
	sink := o.Sink
	if sink == nil {
		sink = collectLines(&res.Lines)
	}
	pg := newPager(sb, 0)
	cut := lineCut(sb, o.Exact)
	// A page after a cursor sorts the whole file again and drops the
	// first From.N lines of the order: the order is the file's, so the
	// page is the suffix of what the same call sorts now.
	var skip, from0 int64
	if o.From != nil {
		skip, from0 = o.From.N, o.From.N
	}
	var prev []byte
	var buf []byte
	var sinkErr error
	first := true
	each(func(l []byte) bool {
		if o.Unique && !first && keyCompare(prev, l) == 0 {
			return true
		}
		first, prev = false, l
		if skip > 0 {
			skip-- // given on an earlier page
			return true
		}
		if res.Count&1023 == 0 && ctx.Err() != nil && (res.Count == 0 || !timedOut(ctx, ctx.Err())) {
			// The deadline stops sort only before its first line (a
			// timeout, stdout empty: it has no part to give); once lines
			// go out the sorted rest follows, and only a cancel stops it.
			sinkErr = ctx.Err()
			return false
		}
		var out []byte
		if len(l) < cap(l) && l[:len(l)+1][len(l)] == '\n' {
			out = l[:len(l)+1] // the line and its newline, in place in the file's bytes
		} else { // the last line, without one
			buf = append(append(buf[:0], l...), '\n')
			out = buf
		}
		out, lim, _ := pageLine(&pg, out, int64(len(out)), cut, &res.Truncation, o.Path, 0) // held whole: never too long
		if lim != "" {
			res.cut(lim, o.next(Cursor{N: from0 + res.Count}))
			return false
		}
		if sinkErr = sink(out); sinkErr != nil {
			return false
		}
		res.Count++
		return true
	})
	if sinkErr != nil {
		return SortResult{}, sinkErr
	}
	return res, nil
}

// sortBudget is the memory sort may use beside the input for its own
// structures: three times the input plus a constant, so that the whole
// stays within four times the input plus a constant (SPEC, "Hostile
// sizes"). A variable so tests can force the compact path.
var sortBudget = func(n int) int { return 3*n + 24<<20 }

// forcePacked makes tests take the packed -n path whenever it applies.
var forcePacked = false

// sortData sorts data's lines and returns an iterator over them in order
// (each line once per occurrence, without its newline). Byte order takes
// the packed path, 12 bytes a line (sortPackedBytes); the other fast paths
// (precomputed keys, a parallel merge) cost tens of bytes a line. When
// that would pass sortBudget — many short lines, such as 16 MiB of empty
// ones — the compact path sorts 4-byte line offsets in place, with keys
// read at each comparison and empty lines counted, not stored.
func (s *lineSorter) sortData(data []byte) func(yield func([]byte) bool) {
	n := bytes.Count(data, nl)
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	if s.plain() && 12*n <= sortBudget(len(data)) && len(data) < 1<<32 {
		return s.sortPackedBytes(data, n)
	}
	if (s.fastBytes(n, len(data)) > sortBudget(len(data)) || forcePacked) && len(data) < 1<<32 {
		if s.o.Numeric && s.key.first == 0 && !s.o.IgnoreCase && (2*16*n <= sortBudget(len(data)) || forcePacked) {
			if each := s.sortPackedNumeric(data, n); each != nil {
				return each
			}
		}
		return s.sortCompact(data, n)
	}
	lines := make([][]byte, 0, n)
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i])
		data = data[i+1:]
	}
	sorted := s.sort(lines)
	return func(yield func([]byte) bool) {
		for i := range lines {
			if !yield(sorted(i)) {
				return
			}
		}
	}
}

// fastBytes is what the fast paths allocate for n lines of size bytes:
// the line slice (24 bytes a line), and for keyed orders the keys and two
// arrays of records (the parallel merge's buffer).
func (s *lineSorter) fastBytes(n, size int) int {
	switch {
	case !s.o.Numeric && !s.o.IgnoreCase && s.key.first == 0:
		return 24 * n
	case s.key.first == 0 && !s.o.IgnoreCase:
		return 24*n + 2*32*n // numeric: records of 24 bytes, or 32 when a key does not fit
	}
	return 24*n + 24*n + size + 2*32*n
}

// packedNum is a -n line as 16 bytes: its number as one word that orders
// as the numbers do, and where the line starts.
type packedNum struct {
	key uint64
	off uint32
}

// sortPackedNumeric is the -n path between the fast and the compact one:
// when every number has at most 12 integer digits and 6 fraction digits
// (as nearly all data has), each line is one packed word and an offset,
// sorted in parallel; nil when a number does not pack.
func (s *lineSorter) sortPackedNumeric(data []byte, n int) func(yield func([]byte) bool) {
	const fracScale = 1_000_000_000_000 // fixed holds 18 fraction digits; 6 are kept
	recs := make([]packedNum, 0, n)
	for off := 0; off < len(data); {
		l := nextLine(data, off)
		f := parseFixed(textio.TrimEOL(l))
		if f.big || f.int >= 1_000_000_000_000 || f.frac%fracScale != 0 {
			return nil
		}
		m := f.int*1_000_000 + f.frac/fracScale // < 2^60
		key := uint64(1<<62) + m
		if f.neg {
			key = uint64(1<<62) - 1 - m
		}
		recs = append(recs, packedNum{key, uint32(off)})
		off += len(l)
	}
	line := func(off uint32) []byte { return lineAt(data, off) }
	parallelSort(recs, func(a, b packedNum) int {
		if a.key != b.key { // the common case: no line is looked at
			c := cmp.Compare(a.key, b.key)
			if s.o.Reverse {
				return -c
			}
			return c
		}
		return s.finish(0, line(a.off), line(b.off), a.off, b.off)
	}, false)
	return func(yield func([]byte) bool) {
		for _, r := range recs {
			if !yield(line(r.off)) {
				return
			}
		}
	}
}

// plain reports whether lines sort in byte order, whole (no -n, -f or -k).
func (s *lineSorter) plain() bool {
	return !s.o.Numeric && !s.o.IgnoreCase && s.key.first == 0
}

// sortPackedBytes is byte order's path: each line as a packedLine of 12
// bytes (where it starts and its first bytes), sorted by a parallel radix
// sort that reads a line a few bytes at a time, in place. Equal lines are
// alike, so their order does not matter; -r reads the result backwards.
func (s *lineSorter) sortPackedBytes(data []byte, n int) func(yield func([]byte) bool) {
	recs := make([]packedLine, 0, n)
	for off := 0; off < len(data); {
		r := packAt(data, uint32(off), 0)
		recs = append(recs, r)
		if k := int(r.lo & 0xff); k < 8 { // the line's length: its newline is next
			off += k + 1
			continue
		}
		i := bytes.IndexByte(data[off+8:], '\n')
		if i < 0 {
			break
		}
		off += 8 + i + 1
	}
	packedSorter{data}.sort(recs)
	return func(yield func([]byte) bool) {
		var l []byte
		prev := -1
		for lo := 0; lo < len(recs); lo += 256 {
			block := recs[lo:min(lo+256, len(recs))]
			if s.o.Reverse {
				block = recs[max(len(recs)-lo-256, 0) : len(recs)-lo]
			}
			// Touch the block's lines first: loads that wait on nothing
			// else overlap their cache misses, where going out one line
			// after the other would wait for each in turn.
			var touch byte
			for _, r := range block {
				touch += data[r.off]
			}
			runtime.KeepAlive(touch)
			for i := range block {
				if s.o.Reverse {
					i = len(block) - 1 - i
				}
				if off := int(block[i].off); off != prev { // alike lines share one offset
					l, prev = lineAt(data, block[i].off), off
				}
				if !yield(l) {
					return
				}
			}
		}
	}
}

// lineAt is the line of data starting at off, without its newline.
func lineAt(data []byte, off uint32) []byte {
	l := data[off:]
	if i := bytes.IndexByte(l, '\n'); i >= 0 {
		return l[:i]
	}
	return l
}

// finish completes a comparison of two lines (at offsets a and b) whose
// keys compared as c, as the fast paths order them: GNU's last resort
// (whole lines) unless -u, reversed with -r, and equal ones in input order.
func (s *lineSorter) finish(c int, la, lb []byte, a, b uint32) int {
	if c == 0 && !s.o.Unique {
		c = bytes.Compare(la, lb)
	}
	if s.o.Reverse {
		c = -c
	}
	if c == 0 {
		c = cmp.Compare(a, b)
	}
	return c
}

// sortCompact is sortData's compact path: one uint32 offset per non-empty
// line (each at least two bytes of input), the empty lines as one entry
// standing for all of them, sorted in place. Equal keys keep input order
// (the offset decides last), as the fast paths' stable sort does.
func (s *lineSorter) sortCompact(data []byte, n int) func(yield func([]byte) bool) {
	empties := 0 // a newline at the start or right after another
	for i := bytes.IndexByte(data, '\n'); i >= 0; {
		if i == 0 || data[i-1] == '\n' {
			empties++
		}
		j := bytes.IndexByte(data[i+1:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	offs := make([]uint32, 0, n-empties+1)
	firstEmpty := -1
	for off := 0; off < len(data); {
		l := nextLine(data, off)
		if l[0] == '\n' {
			if firstEmpty < 0 {
				firstEmpty = off
				offs = append(offs, uint32(off))
			}
		} else {
			offs = append(offs, uint32(off))
		}
		off += len(l)
	}
	line := func(off uint32) []byte { return lineAt(data, off) }
	slices.SortFunc(offs, func(a, b uint32) int {
		la, lb := line(a), line(b)
		return s.finish(s.keyCompare(la, lb), la, lb, a, b)
	})
	return func(yield func([]byte) bool) {
		for _, off := range offs {
			l, times := line(off), 1
			if int(off) == firstEmpty {
				times = empties
			}
			for range times {
				if !yield(l) {
					return
				}
			}
		}
	}
}

func readAllInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// sortKey is -k N[,M]: fields first..last (last 0 = end of line).
type sortKey struct{ first, last int }

type lineSorter struct {
	o   SortOptions
	key sortKey
}

func newLineSorter(o SortOptions, k sortKey) *lineSorter { return &lineSorter{o: o, key: k} }

// record is a line's index with its precomputed number (for -n). It
// holds no pointers, so sorting moves 32 bytes and the GC never scans it.
type record struct {
	num fixed
	idx int
}

func (r record) line() int { return r.idx }

// fixed is a number of at most 18 integer and 18 fraction digits, exactly.
type fixed struct {
	neg, big bool   // big: does not fit; compare the strings instead
	int      uint64 // integer part
	frac     uint64 // fraction digits, scaled to 18 places
}

func parseFixed(s []byte) fixed {
	n := parseNum(s)
	f := fixed{neg: n.neg}
	if len(n.int) > 18 || len(n.frac) > 18 {
		f.big = true
		return f
	}
	for _, c := range n.int {
		f.int = f.int*10 + uint64(c-'0')
	}
	for i := 0; i < 18; i++ {
		f.frac *= 10
		if i < len(n.frac) {
			f.frac += uint64(n.frac[i] - '0')
		}
	}
	return f
}

// compareFixed compares two numbers that both fit.
func compareFixed(a, b fixed) int {
	if a.neg != b.neg {
		if a.neg {
			return -1
		}
		return 1
	}
	c := 0
	switch {
	case a.int != b.int:
		c = cmpU(a.int, b.int)
	case a.frac != b.frac:
		c = cmpU(a.frac, b.frac)
	}
	if a.neg {
		return -c
	}
	return c
}

// cmpU orders two different numbers (it never says equal).
func cmpU(a, b uint64) int {
	if a < b {
		return -1
	}
	return 1
}

// sort orders lines in place. Plain byte order uses a radix pass plus
// parallel bucket sorts (sortData sends it to sortPackedBytes instead,
// which needs half the memory); keyed orders precompute each line's key
// once.
func (s *lineSorter) sort(lines [][]byte) (sorted func(i int) []byte) {
	if !s.o.Numeric && !s.o.IgnoreCase && s.key.first == 0 {
		radixSortLines(lines)
		if s.o.Reverse {
			slices.Reverse(lines)
		}
		return func(i int) []byte { return lines[i] }
	}
	keys := lines
	if s.key.first > 0 || s.o.IgnoreCase {
		keys = make([][]byte, len(lines))
		for i, l := range lines {
			k := l
			if s.key.first > 0 {
				k = s.field(l)
			}
			if s.o.IgnoreCase {
				k = asciiUpper(k) // the C locale's -f, as foldCompare
			}
			keys[i] = k
		}
	}
	if sorted := s.sortFixed(lines, keys); sorted != nil {
		return sorted
	}
	recs := make([]record, len(lines))
	for i := range lines {
		recs[i].idx = i
		if s.o.Numeric {
			recs[i].num = parseFixed(keys[i])
		}
	}
	keyCmp := func(a, b record) int {
		if s.o.Numeric {
			if a.num.big || b.num.big {
				return numCompare(keys[a.idx], keys[b.idx])
			}
			return compareFixed(a.num, b.num)
		}
		return bytes.Compare(keys[a.idx], keys[b.idx])
	}
	return sortBy(s, lines, recs, keyCmp, nil)
}

// sortBy sorts lines by their records: keyCmp orders the keys; equal keys
// fall back to whole-line byte order (GNU without -s), or keep input
// order with -u (the first of a run is kept); -r reverses. cmp, when not
// nil, is keyCmp with that last resort already in (one call per compare
// instead of two, for the hot numeric path).
func sortBy[T interface{ line() int }](s *lineSorter, lines [][]byte, recs []T, keyCmp, cmp func(a, b T) int) (sorted func(i int) []byte) {
	if cmp == nil {
		cmp = func(a, b T) int {
			if c := keyCmp(a, b); c != 0 {
				return c
			}
			return bytes.Compare(lines[a.line()], lines[b.line()]) // last resort: whole lines
		}
	}
	if s.o.Unique {
		cmp = keyCmp
	}
	if s.o.Reverse {
		fwd := cmp
		cmp = func(a, b T) int { return fwd(b, a) }
	}
	parallelSort(recs, cmp, s.o.Unique)
	// The records say where each line goes; the lines themselves stay put
	// (a second slice of them would cost as much fresh memory again, a
	// page fault per 4 KiB, and permuting in place is slower still).
	return func(i int) []byte { return lines[recs[i].line()] }
}

// fixedKey is a number that fits (see fixed) as two words that order as
// the numbers do, so -n compares two integers instead of calling
// compareFixed through a closure: negatives below every non-negative
// (as compareFixed has it, -0 too), a larger magnitude lower among them.
type fixedKey struct {
	hi, lo uint64
	idx    int
}

func (k fixedKey) line() int { return k.idx }

func toFixedKey(f fixed, idx int) fixedKey {
	if f.neg {
		return fixedKey{hi: 1<<62 - 1 - f.int, lo: ^f.frac, idx: idx}
	}
	return fixedKey{hi: 1<<62 + f.int, lo: f.frac, idx: idx}
}

// sortFixed sorts by -n keys that all fit in fixedKey; it returns nil,
// sorting nothing, when not -n or when one does not fit (then the general
// path runs).
func (s *lineSorter) sortFixed(lines, keys [][]byte) (sorted func(i int) []byte) {
	if !s.o.Numeric {
		return nil
	}
	recs := make([]fixedKey, len(lines))
	for i := range lines {
		f := parseFixed(keys[i])
		if f.big {
			return nil
		}
		recs[i] = toFixedKey(f, i)
	}
	keyCmp := func(a, b fixedKey) int {
		if a.hi != b.hi {
			return cmpU(a.hi, b.hi)
		}
		if a.lo != b.lo {
			return cmpU(a.lo, b.lo)
		}
		return 0
	}
	return sortBy(s, lines, recs, keyCmp, func(a, b fixedKey) int {
		if a.hi != b.hi {
			return cmpU(a.hi, b.hi)
		}
		if a.lo != b.lo {
			return cmpU(a.lo, b.lo)
		}
		return bytes.Compare(lines[a.idx], lines[b.idx])
	})
}

// keyCompare compares the sort keys of two lines (no last resort).
func (s *lineSorter) keyCompare(a, b []byte) int {
	if s.key.first > 0 {
		a, b = s.field(a), s.field(b)
	}
	switch {
	case s.o.Numeric:
		return numCompare(a, b)
	case s.o.IgnoreCase:
		return foldCompare(a, b)
	}
	return bytes.Compare(a, b)
}

// field extracts the key's fields from a line. Without a separator a field
// is a run of blanks followed by non-blanks (GNU: leading blanks belong to
// the field).
func (s *lineSorter) field(line []byte) []byte {
	start, end := -1, len(line)
	n := 0
	if sep := s.o.Separator; sep != "" {
		c := sep[0]
		pos := 0
		for n = 1; ; n++ {
			if n == s.key.first {
				start = pos
			}
			i := bytes.IndexByte(line[pos:], c)
			if i < 0 {
				break
			}
			if s.key.last > 0 && n == s.key.last {
				end = pos + i
				break
			}
			pos += i + 1
		}
	} else {
		pos := 0
		for n = 1; pos <= len(line); n++ {
			if n == s.key.first {
				start = pos
			}
			for pos < len(line) && isBlank(line[pos]) {
				pos++
			}
			for pos < len(line) && !isBlank(line[pos]) {
				pos++
			}
			if s.key.last > 0 && n == s.key.last {
				end = pos
				break
			}
			if pos == len(line) {
				break
			}
		}
	}
	if start < 0 || start > end {
		return nil
	}
	return line[start:end]
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }

func foldCompare(a, b []byte) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		x, y := upper(a[i]), upper(b[i])
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return len(a) - len(b)
}

// asciiUpper is a copy of b with ASCII letters upper-cased.
func asciiUpper(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = upper(c)
	}
	return out
}

func upper(c byte) byte {
	if 'a' <= c && c <= 'z' {
		return c - 32
	}
	return c
}

// numCompare compares leading numbers as GNU sort -n does in the C locale:
// blanks, an optional '-', digits, an optional '.' and digits; no number
// is zero. It compares digit strings, so any length is exact.
func numCompare(a, b []byte) int {
	na, nb := parseNum(a), parseNum(b)
	if na.neg != nb.neg {
		if na.neg {
			return -1
		}
		return 1
	}
	c := compareMagnitude(na, nb)
	if na.neg {
		return -c
	}
	return c
}

type number struct {
	neg       bool
	int, frac []byte // int without leading zeros, frac without trailing zeros
}

func parseNum(s []byte) number {
	i := 0
	for i < len(s) && isBlank(s[i]) {
		i++
	}
	var n number
	if i < len(s) && s[i] == '-' {
		n.neg = true
		i++
	}
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	n.int = bytes.TrimLeft(s[i:j], "0")
	if j < len(s) && s[j] == '.' {
		k := j + 1
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		n.frac = bytes.TrimRight(s[j+1:k], "0")
	}
	if len(n.int) == 0 && len(n.frac) == 0 {
		n.neg = false // -0 == 0
	}
	return n
}

func compareMagnitude(a, b number) int {
	if len(a.int) != len(b.int) {
		if len(a.int) < len(b.int) {
			return -1
		}
		return 1
	}
	if c := bytes.Compare(a.int, b.int); c != 0 {
		return c
	}
	return bytes.Compare(a.frac, b.frac)
}
