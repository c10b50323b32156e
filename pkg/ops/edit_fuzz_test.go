package ops

import (
	"bytes"
	"testing"
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
