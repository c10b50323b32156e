package ops

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"math"
	"unicode/utf8"
	"unsafe"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// Continuation (SPEC §2): a list result cut by a limit carries
// next_cursor, and the same call with that cursor gives the items after
// the cut. A cursor holds a position and the call it was made for; the
// position is only ever compared with the items the call produces under
// the policy in force (a path with the walk's keys, a name with a
// directory's, an index with a count), never opened or resolved, so a
// forged one can only choose where a suffix of the honest answer starts.

// Cursor is a position in a list result: the last item a page gave.
// Which fields a command uses is its own: find and grep a walk-order key
// (Key, a path relative to the walked argument Arg), ls an entry name
// (Key), history a change id (N), slice, sort and cut the items given
// (N), stat of several paths the argument (Arg), grep a line (N, with
// Skip items of it given, in the file whose identity is ID).
type Cursor struct {
	Arg  int64  `json:"a,omitempty"`
	Key  string `json:"k,omitempty"`
	N    int64  `json:"n,omitempty"`
	Skip int64  `json:"s,omitempty"`
	ID   string `json:"i,omitempty"`
}

const (
	cursorVersion = 1
	maxCursor     = 4096 // bytes of a cursor string (SPEC §2)
	bindLen       = 12   // bytes of the call's digest a cursor carries
)

// binding is the digest of the call a cursor belongs to: the command,
// its values (options and arguments, the cursor itself not among them),
// the policy in force and the form it prints in.
func binding(sb *sandbox.Sandbox, in *spec.Input) []byte {
	h := sha256.New()
	part := func(b []byte) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	part([]byte{cursorVersion})
	if op := in.Op(); op != nil {
		part([]byte(op.Name))
	}
	vals, _ := json.Marshal(in.Values()) // keys sorted: the same values, the same bytes
	part(vals)
	pol, _ := json.Marshal(sb.Policy())
	part(pol)
	part([]byte(in.Form))
	return h.Sum(nil)[:bindLen]
}

// errCursor is the usage error of a cursor this call cannot take.
func errCursor(why string) error {
	return fserr.Errorf(fserr.CodeUsage, "", "the cursor %s: a cursor resumes only the call that gave it as next_cursor (the same command and arguments, under the same policy, in the same format);", why).
		WithHint(fserr.Hint{Option: "cursor", Text: "to start from the first item, leave %s out"})
}

// cursorIn decodes the call's cursor: nil when it gave none; usage when
// it does not decode, or was made for another command, other arguments,
// another policy or another format.
func cursorIn(sb *sandbox.Sandbox, in *spec.Input) (*Cursor, error) {
	if in.Cursor == "" {
		return nil, nil
	}
	if len(in.Cursor) > maxCursor {
		return nil, errCursor("is longer than 4 KiB")
	}
	raw, err := base64.RawURLEncoding.DecodeString(in.Cursor)
	if err != nil || len(raw) < bindLen {
		return nil, errCursor("does not decode")
	}
	if !bytes.Equal(raw[:bindLen], binding(sb, in)) {
		return nil, errCursor("was made for another call (command, arguments, policy or format)")
	}
	var c Cursor
	dec := json.NewDecoder(bytes.NewReader(raw[bindLen:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() || c.Arg < 0 || c.N < 0 || c.Skip < 0 || !utf8.ValidString(c.Key) {
		return nil, errCursor("does not decode")
	}
	return &c, nil
}

// seal encodes c as the call's next_cursor. A key so long that the cursor
// would pass 4 KiB is cut (at a '/' when it can be): the page then
// starts at or before the item after the cut, never after it.
func seal(sb *sandbox.Sandbox, in *spec.Input, c Cursor) string {
	bind := binding(sb, in)
	for {
		body, _ := json.Marshal(c)
		if s := base64.RawURLEncoding.EncodeToString(append(bind[:bindLen:bindLen], body...)); len(s) <= maxCursor {
			return s
		}
		k := cutText([]byte(c.Key), len(c.Key)/2)
		if i := bytes.LastIndexByte(k, '/'); i > 0 {
			k = k[:i]
		}
		c.Key, c.N, c.Skip, c.ID = string(k), 0, 0, ""
	}
}

// pager cuts a list result (SPEC §2): at its item cap (max_results, or
// the caller's --limit) and at its byte budget (max_result_bytes),
// counted as fsbox's JSON of the items (a comma each). A page always
// holds its first item.
type pager struct {
	max     int64
	capName string
	budget  int64
	used    int64
	n       int64
}

func newPager(sb *sandbox.Sandbox, limit int64) pager {
	max, name := itemCap(sb, limit)
	budget := sb.Limits().MaxResultBytes
	if budget <= 0 {
		budget = math.MaxInt64
	}
	return pager{max: max, capName: name, budget: budget}
}

// admit counts one more item of size bytes of JSON: "" when it is on the
// page, else the limit that cuts the list before it.
func (p *pager) admit(size int64) string {
	if p.n >= p.max {
		return p.capName
	}
	if p.n > 0 && size+1 > p.budget-p.used {
		return "max_result_bytes"
	}
	p.n++
	p.used += size + 1
	return ""
}

// cut records that limit cut the list, and where the next page starts.
func (t *Truncation) cut(limit string, next string) {
	t.Truncated, t.Limit, t.NextCursor = true, limit, next
}

// jsonStrLen is the length of s as fsbox's JSON writes it as a string
// (encoding/json without HTML escaping), quotes included.
func jsonStrLen(s string) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += int64(size)
		}
		i += size
	}
	return n
}

// jsonBytesLen is jsonStrLen of b's text as an item holds it (jsonText:
// a run of bytes that are not UTF-8 is one U+FFFD).
func jsonBytesLen(b []byte) int64 {
	if utf8.Valid(b) {
		return jsonStrLen(unsafe.String(unsafe.SliceData(b), len(b))) // read only, not kept
	}
	return jsonStrLen(jsonText(b))
}

// jsonRowLen is the JSON length of a row of fields.
func jsonRowLen(row []string) int64 { return jsonListLen(row, jsonStrLen) }

// jsonListLen is the JSON length of a list whose items' lengths itemLen
// gives: brackets and a comma between each.
func jsonListLen[T any](items []T, itemLen func(T) int64) int64 {
	n := int64(2)
	for i, it := range items {
		if i > 0 {
			n++
		}
		n += itemLen(it)
	}
	return n
}

// jsonLen is the length of v's JSON: for the items without a faster
// measure (entries, changes, counts).
func jsonLen(v any) int64 {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return int64(len(b))
}

// Paging is a list call's continuation, carried in its options: where
// the page starts (From, nil for the first item) and how the cut seals
// the next cursor (nil when the call came without an input: a typed
// call from Go makes no cursor).
type Paging struct {
	From *Cursor
	seal func(Cursor) string
}

// pagingOf is the paging of a call: its cursor decoded (usage when it
// cannot be taken) and the seal of its next one.
func pagingOf(sb *sandbox.Sandbox, in *spec.Input) (Paging, error) {
	c, err := cursorIn(sb, in)
	if err != nil {
		return Paging{}, err
	}
	return Paging{From: c, seal: func(c Cursor) string { return seal(sb, in, c) }}, nil
}

// next is the cursor of the page after the item at c ("" without a seal).
func (p Paging) next(c Cursor) string {
	if p.seal == nil {
		return ""
	}
	return p.seal(c)
}
