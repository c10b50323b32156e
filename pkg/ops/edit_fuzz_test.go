package ops

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	udiff "github.com/aymanbagabas/go-udiff"
)

// FuzzApplyEdit: an edit changes exactly the replaced occurrence: the
// bytes before and after it are the original ones.
func FuzzApplyEdit(f *testing.F) {
	f.Add([]byte("a\r\nb\r\nc"), "a\nb", "x")
	f.Add([]byte("\xef\xbb\xbfhello"), "hello", "bye")
	f.Add([]byte("caf\xe9\n"), "caf", "CAF")
	f.Fuzz(func(t *testing.T, data []byte, old, new string) {
		if old == "" {
			return
		}
		out, n, err := applyEdit(data, EditSpec{Old: old, New: new}, "f", 0, 1)
		if err != nil {
			return
		}
		if n != 1 {
			t.Fatalf("without All, %d replacements", n)
		}
		// Find which spelling matched (as written, or with CRLF).
		o, nw := []byte(old), []byte(new)
		if !bytes.Contains(data, o) {
			o, nw = toCRLF(o), toCRLF(nw)
		}
		i := bytes.Index(data, o)
		if i < 0 {
			t.Fatalf("applied an edit whose text is absent")
		}
		want := append(append(append([]byte{}, data[:i]...), nw...), data[i+len(o):]...)
		if !bytes.Equal(out, want) {
			t.Fatalf("bytes outside the edit changed:\n in %q\nout %q\nwant %q", data, out, want)
		}
	})
}

// TestSpanDiffMatchesFullDiff: the windowed diff equals a diff of the
// whole file.
func TestSpanDiffMatchesFullDiff(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for iter := 0; iter < 300; iter++ {
		var b bytes.Buffer
		n := 1 + rng.Intn(30)
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "line %d %c\n", i, 'a'+rng.Intn(3))
		}
		if rng.Intn(3) == 0 {
			b.WriteString("tail")
		}
		data := b.Bytes()
		old := []string{"a\n", "b", "line 1", "c\nline", "tail", "\n"}[rng.Intn(6)]
		e := EditSpec{Old: old, New: []string{"", "X", "Y\nZ\n"}[rng.Intn(3)], All: rng.Intn(2) == 0}
		out, _, spans, err := applyEditSpans(data, e, "f", 0, 1)
		if err != nil {
			continue
		}
		got, err := spanDiff("a/f", "b/f", data, spans)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := udiff.ToUnified("a/f", "b/f", string(data), spans, udiff.DefaultContextLines)
		if got != want {
			t.Fatalf("edit %+v on %q:\ngot\n%s\nwant\n%s", e, data, got, want)
		}
		_ = out
	}
}
