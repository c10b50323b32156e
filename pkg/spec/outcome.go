package spec

import (
	"reflect"
	"strings"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// Result is what an operation's Run returns: a value that encodes as the
// operation's JSON result, and that says how the call ended beyond it.
type Result interface {
	Outcome() Outcome
}

// Outcome is how a call ended beyond its result's JSON: whether a limit
// cut its list, which of its paths failed, what its text form says on
// stderr, whether it found anything. Every face reads it from the result
// (Result) to choose the exit status and stderr's lines; the zero Outcome
// is a whole result with nothing more to say.
type Outcome struct {
	// Cut, when set, says that a limit cut the result's list (truncated
	// in its JSON).
	Cut *Cut
	// Failures, when set, are the paths that failed while the others
	// were processed (the result's errors[]).
	Failures *Failures
	// Notes are what the text form says on stderr after the output (that
	// a binary file matches, that ignore rules left everything out).
	Notes []string
	// NoMatch: the result finds things and found nothing (grep: exit 1).
	NoMatch bool
	// Quiet: the call prints nothing, and any match is its success
	// whatever else happened (grep -q).
	Quiet bool
}

// Cut says which limit cut a result's list short.
type Cut struct {
	// Limit is the limit that cut it: a policy's (max_results,
	// max_result_bytes), the call's deadline ("timeout") or the caller's
	// own ("limit").
	Limit string
	// Cuts names every cut in the order they came, when the deadline
	// stopped a count after a limit cut its list (SPEC §2, Counts).
	Cuts []string
	// NextCursor resumes the list after the cut ("" when it cannot).
	NextCursor string
}

// Failures are the paths of a call given several that failed while the
// others were processed.
type Failures struct {
	// First is the first failing path's error, in argument order: the
	// call's exit class once its result is printed.
	First error
	// Shown are the failures the result lists (errors[]), code and
	// message each; More counts those past them (errors_more).
	Shown []*fserr.Error
	More  int64
}

// ListField is a result type's field that holds a list: its JSON key,
// the type of its elements, and whether they are the result's items.
type ListField struct {
	Key   string
	Elem  reflect.Type
	Items bool
}

// The struct tag by which a result type declares the fields a face treats
// apart:
//
//   - fsbox:"items" on the list that holds the result's items: a
//     streaming operation sends them to the Sink, ndjson prints them a
//     line each (the rest of the result as the summary after them), and
//     --fields keeps keys of each item;
//   - fsbox:"list" on another list whose elements --fields shapes, the
//     result being printed whole (wc's files);
//   - fsbox:"big" on a string that may be large (read's content, edit's
//     diff), which a face may write in place rather than copy.
const (
	tagKey   = "fsbox"
	tagItems = "items"
	tagList  = "list"
	tagBig   = "big"
)

// ListFields returns the fields of result's type tagged fsbox:"items" or
// fsbox:"list", in field order (none for a type that is no struct).
func ListFields(result any) []ListField {
	t := reflect.TypeOf(result)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	var out []ListField
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get(tagKey)
		if !f.IsExported() || f.Anonymous || (tag != tagItems && tag != tagList) {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if key == "" {
			key = f.Name
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if key != "-" && ft.Kind() == reflect.Slice {
			out = append(out, ListField{Key: key, Elem: ft.Elem(), Items: tag == tagItems})
		}
	}
	return out
}

// ListKeys returns the JSON keys of ListFields(result).
func ListKeys(result any) []string {
	var keys []string
	for _, f := range ListFields(result) {
		keys = append(keys, f.Key)
	}
	return keys
}

// Items returns the list of the result r tagged fsbox:"items" (a slice,
// or a pointer to one), and whether r has one.
func Items(r any) (reflect.Value, bool) {
	v := reflect.ValueOf(r)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return reflect.Value{}, false
	}
	for _, f := range reflect.VisibleFields(v.Type()) {
		if !f.IsExported() || f.Anonymous || f.Tag.Get(tagKey) != tagItems {
			continue
		}
		fv, err := v.FieldByIndexErr(f.Index)
		if err != nil {
			continue
		}
		for fv.Kind() == reflect.Pointer && !fv.IsNil() {
			fv = fv.Elem()
		}
		if fv.Kind() == reflect.Slice {
			return fv, true
		}
	}
	return reflect.Value{}, false
}

// BigString returns the string field of the struct r points to that is
// tagged fsbox:"big", to be written in place; nil when r is no pointer
// to a struct with one.
func BigString(r any) *string {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	v = v.Elem()
	for _, f := range reflect.VisibleFields(v.Type()) {
		if !f.IsExported() || f.Type != reflect.TypeFor[string]() || f.Tag.Get(tagKey) != tagBig {
			continue
		}
		if fv, err := v.FieldByIndexErr(f.Index); err == nil {
			return fv.Addr().Interface().(*string)
		}
	}
	return nil
}
