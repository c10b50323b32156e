package spec

import (
	"reflect"
	"slices"
	"testing"
)

type tagged struct {
	Name    string    `json:"name"`
	Lines   *[]string `json:"lines,omitempty" fsbox:"items"`
	Entries []int     `json:"entries" fsbox:"items"`
	Files   []string  `json:"files" fsbox:"list"`
	Other   []string  `json:"other"`
	Body    string    `json:"body" fsbox:"big"`
	Count   int       `json:"count" fsbox:"items"` // no list: ignored
	hidden  []string  `fsbox:"items"`              // unexported: ignored
}

type noBig struct {
	Body []byte `json:"body" fsbox:"big"` // no string: ignored
}

// TestListFields: the lists a result type declares by tag, in field
// order, with their element types; a type that is no struct has none.
func TestListFields(t *testing.T) {
	_ = tagged{}.hidden
	for _, c := range []struct {
		name   string
		result any
		want   []ListField
	}{
		{"struct", tagged{}, []ListField{
			{Key: "lines", Elem: reflect.TypeFor[string](), Items: true},
			{Key: "entries", Elem: reflect.TypeFor[int](), Items: true},
			{Key: "files", Elem: reflect.TypeFor[string]()},
		}},
		{"pointer", &tagged{}, []ListField{
			{Key: "lines", Elem: reflect.TypeFor[string](), Items: true},
			{Key: "entries", Elem: reflect.TypeFor[int](), Items: true},
			{Key: "files", Elem: reflect.TypeFor[string]()},
		}},
		{"untagged", struct{ Lines []string }{}, nil},
		{"no struct", []string{}, nil},
		{"nil", nil, nil},
	} {
		if got := ListFields(c.result); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: ListFields = %+v, want %+v", c.name, got, c.want)
		}
	}
	if got := ListKeys(tagged{}); !slices.Equal(got, []string{"lines", "entries", "files"}) {
		t.Errorf("ListKeys = %q", got)
	}
}

// TestItems: the items of a result are its first fsbox:"items" list that
// is set (a nil pointer to a list is none); a result without one has
// none.
func TestItems(t *testing.T) {
	lines := []string{"a", "b"}
	for _, c := range []struct {
		name   string
		result any
		ok     bool
		n      int
	}{
		{"pointer field set", tagged{Lines: &lines}, true, 2},
		{"pointer field nil: the next list", tagged{Entries: []int{1, 2, 3}}, true, 3},
		{"nil slice is an empty list", tagged{}, true, 0},
		{"through a pointer", &tagged{Lines: &lines}, true, 2},
		{"no items list", struct {
			Files []string `fsbox:"list"`
		}{Files: []string{"x"}}, false, 0},
		{"no struct", "x", false, 0},
	} {
		v, ok := Items(c.result)
		if ok != c.ok || (ok && v.Len() != c.n) {
			t.Errorf("%s: Items = %v (%v), want %d (%v)", c.name, v, ok, c.n, c.ok)
		}
	}
}

// TestBigString: the big string is found only through a pointer (it is
// written in place), and only on a string field.
func TestBigString(t *testing.T) {
	r := &tagged{Body: "content"}
	p := BigString(r)
	if p == nil || *p != "content" {
		t.Fatalf("BigString = %v", p)
	}
	*p = "changed"
	if r.Body != "changed" {
		t.Error("BigString does not point into the result")
	}
	for name, v := range map[string]any{"value": tagged{}, "nil pointer": (*tagged)(nil), "no string": &noBig{}, "nil": nil, "no struct": new(string)} {
		if BigString(v) != nil {
			t.Errorf("%s: BigString found one", name)
		}
	}
}
