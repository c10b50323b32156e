package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/ops"
)

// encodeJSON is what encoding/json writes for v through newEncoder.
func encodeJSON(t testing.TB, v any, pretty bool) string {
	var b bytes.Buffer
	if err := newEncoder(&b, pretty).Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", "quote \" back \\ slash", "\b\f\n\r\t\x00\x01\x1f\x7f", "<&>", "\u2028\u2029",
		"caf\xc3\xa9", "bad \xff\xfe utf8", "\xe2\x80", "tail \xf0\x9f\x98"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := strings.TrimSuffix(encodeJSON(t, s, false), "\n")
		if got := string(appendJSONString(nil, s)); got != want {
			t.Fatalf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	})
}

// emitWithString prints exactly what document prints, compact and pretty.
func TestEmitWithString(t *testing.T) {
	next := int64(7)
	sum := "ab12"
	for _, content := range []string{"", "line\n", strings.Repeat("x\"y\\\n\t\u2028é", 5000), "\x00 stays a NUL"} {
		for _, format := range []string{formatJSON, formatNDJSON} {
			for _, pretty := range []bool{false, true} {
				r := ops.ReadResult{Path: "a \"b\".txt", Size: 3, Content: content, NextOffset: &next, SHA256: &sum, EOL: "lf"}
				var got, want bytes.Buffer
				p := &output{w: &got, format: format, pretty: pretty}
				if err := p.emitWithString(&r, &r.Content); err != nil {
					t.Fatal(err)
				}
				if r.Content != content {
					t.Fatal("the field was not put back")
				}
				p.w = &want
				if err := p.document(r); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("%s pretty=%v content %.20q:\ngot  %.300s\nwant %.300s", format, pretty, content, got.String(), want.String())
				}
			}
		}
	}
}
