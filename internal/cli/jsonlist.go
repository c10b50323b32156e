package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"

	"github.com/fsbox/fsbox/pkg/spec"
)

// jsonList writes a streaming operation's (Op.Streams) result as the one
// JSON object of --format json while its items come, so memory does not
// grow with their number: the list member is opened at the first item
// and each item is written into it as it is sent (through a 64 KiB
// buffer); once Run returns, the list is closed and the result's other
// members follow in the result's field order. The list therefore comes
// first; the object says the same as the collected one, key for key.
//
// Which member is the list is learnt, not listed per operation: it is
// the result type's list field (spec.ListFields, declared by its tag)
// whose element type is the item's (grep's matches, counts or paths by
// mode; find's paths). When no item came, nothing is written
// until Run returns, and the whole object goes out in field order with
// the list as [] where the streamed result left it null.
type jsonList struct {
	p      *output
	bw     *bufio.Writer
	lists  []spec.ListField // the result type's list fields, in field order
	key    string           // the list being written: "" until the first item
	n      int64
	item   bytes.Buffer
	indent bytes.Buffer
	enc    *json.Encoder // into item, as newEncoder writes
}

// newJSONList returns the writer of a result of result's type into bw,
// or nil when the type has no list member (the result is then collected).
func newJSONList(p *output, bw *bufio.Writer, result any) *jsonList {
	lists := spec.ListFields(result)
	if len(lists) == 0 {
		return nil
	}
	l := &jsonList{p: p, bw: bw, lists: lists}
	l.enc = newEncoder(&l.item, false)
	if p.pretty && (p.shape == nil || p.shape.fields == nil) {
		l.enc.SetIndent("    ", "  ") // an item of the list, two levels in
	}
	return l
}

// keyFor is the list an item belongs to: the list field whose elements
// are of the item's type (or the item points to one), else one whose
// elements it converts to (grep's binaryMatch is a Match marshalled
// another way), else the first.
func (l *jsonList) keyFor(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return l.lists[0].Key
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	for _, f := range l.lists {
		if t == f.Elem {
			return f.Key
		}
	}
	for _, f := range l.lists {
		if t.ConvertibleTo(f.Elem) {
			return f.Key
		}
	}
	return l.lists[0].Key
}

// add writes one item (the spec.Sink's Item).
func (l *jsonList) add(v any) error {
	if l.key == "" {
		l.key = l.keyFor(v)
		l.bw.WriteByte('{')
		l.memberKey(l.key)
		l.bw.WriteByte('[')
	} else {
		l.bw.WriteByte(',')
	}
	if l.p.pretty {
		l.bw.WriteString("\n    ")
	}
	if row, ok := v.([]string); ok && row == nil {
		v = []string{} // an empty row: [] as collected, not null
	}
	if s, ok := v.(string); ok && (l.p.shape == nil || l.p.shape.fields == nil) {
		// A line or a path: quoted directly, as encoding/json would.
		l.n++
		l.item.Reset()
		_, err := l.bw.Write(appendJSONString(l.item.AvailableBuffer(), s))
		return err
	}
	l.item.Reset()
	if err := l.enc.Encode(v); err != nil {
		return err
	}
	raw := bytes.TrimSuffix(l.item.Bytes(), []byte("\n"))
	if l.p.shape != nil && l.p.shape.fields != nil {
		raw = l.p.shape.keepJSON(raw)
		if l.p.pretty {
			l.indent.Reset()
			if err := json.Indent(&l.indent, raw, "    ", "  "); err != nil {
				return err
			}
			raw = l.indent.Bytes()
		}
	}
	l.n++
	_, err := l.bw.Write(raw)
	return err
}

// finish writes the rest of the object once Run has returned r: the
// list's end and r's other members, or, when no item came, all of r
// with its list as [].
func (l *jsonList) finish(r any) error {
	raw, err := marshal(r)
	if err != nil {
		return err
	}
	keys, vals, ok := objectOf(raw)
	if !ok {
		return errors.New("a streamed result is no JSON object")
	}
	first := true
	switch list := l.emptyList(keys, vals); {
	case l.key != "":
		if l.p.pretty {
			l.bw.WriteString("\n  ")
		}
		l.bw.WriteByte(']')
		first = false
	case list >= 0:
		// No item came and nothing is written yet: the whole object, in
		// field order, its list as [] where the stream left it null.
		if string(vals[list]) == "null" {
			vals[list] = json.RawMessage("[]")
		}
		l.bw.WriteByte('{')
	default:
		// No item came and r leaves every list out (omitempty, as the
		// collected form would not): the first list field, first.
		l.key = l.lists[0].Key
		l.bw.WriteByte('{')
		l.memberKey(l.key)
		l.bw.WriteString("[]")
		first = false
	}
	for i, k := range keys {
		if k == l.key {
			continue
		}
		if !first {
			l.bw.WriteByte(',')
		}
		first = false
		l.memberKey(k)
		v := []byte(vals[i])
		if l.p.pretty {
			l.indent.Reset()
			if err := json.Indent(&l.indent, v, "  ", "  "); err != nil {
				return err
			}
			v = l.indent.Bytes()
		}
		l.bw.Write(v)
	}
	if l.p.pretty && !first {
		l.bw.WriteByte('\n')
	}
	_, err = l.bw.WriteString("}\n")
	return err
}

// emptyList is the index in r's members (keys, vals) of the list an
// empty result shows: the first list field r has that is not null, else
// the first it has; -1 when r has none.
func (l *jsonList) emptyList(keys []string, vals []json.RawMessage) int {
	list := -1
	for _, f := range l.lists {
		i := slices.Index(keys, f.Key)
		if i >= 0 && (list < 0 || string(vals[list]) == "null" && string(vals[i]) != "null") {
			list = i
		}
	}
	return list
}

// memberKey writes a member's key and colon, on a line of its own in the
// indented form.
func (l *jsonList) memberKey(k string) {
	if l.p.pretty {
		l.bw.WriteString("\n  ")
	}
	l.bw.Write(appendKey(nil, k))
	if l.p.pretty {
		l.bw.WriteByte(' ')
	}
}
