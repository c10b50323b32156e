package patch

import (
	"bytes"
	"slices"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add([]byte("*** Begin Patch\n*** Update File: a\n@@ x\n-b\n+c\n*** End of File\n*** End Patch\n"))
	f.Add([]byte("*** Begin Patch\n*** Add File: a\n+x\n*** Delete File: b\n*** Update File: c\n*** Move to: d\n*** End Patch\n"))
	f.Add([]byte("diff --git a/x b/y\nsimilarity index 90%\nrename from x\nrename to y\n--- a/x\n+++ b/y\n@@ -1,2 +1,2 @@ h\n a\n-b\n\\ No newline at end of file\n+c\n"))
	f.Add([]byte("--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n\\ No newline at end of file\n--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"))
	f.Add([]byte("diff --git \"a/q\\303\" \"b/q\\303\"\r\nnew file mode 100644\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		files, err := Parse(data)
		if err != nil {
			if _, ok := err.(*ParseError); !ok {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		if len(files) == 0 {
			t.Fatal("no files and no error")
		}
		for _, fl := range files {
			if fl.Path == "" {
				t.Fatal("empty path")
			}
			switch fl.Op {
			case Add, Delete:
				if fl.NumHunks() > 0 {
					t.Fatalf("%s with hunks", fl.Op)
				}
			case Update:
				// Whatever the hunks, Apply must not panic, and
				// applying them as they are read gives what applying
				// them all at once does.
				r1, err1 := Apply(data, fl.Hunks())
				r2, err2 := fl.Apply(data)
				if (err1 == nil) != (err2 == nil) || err1 != nil && err1.Error() != err2.Error() {
					t.Fatalf("Apply: %v; File.Apply: %v", err1, err2)
				}
				if err1 == nil && (!bytes.Equal(r1.Content, r2.Content) || !slices.Equal(r1.At, r2.At)) {
					t.Fatalf("Apply and File.Apply differ: %+v, %+v", r1, r2)
				}
			default:
				t.Fatalf("op %q", fl.Op)
			}
		}
	})
}

// fuzzReader hands out small numbers from the fuzzer's bytes, then zeros.
type fuzzReader struct {
	b []byte
	i int
}

func (r *fuzzReader) next(n int) int {
	if r.i >= len(r.b) {
		return 0
	}
	v := int(r.b[r.i])
	r.i++
	return v % n
}

var fuzzAlphabet = []string{"a", "b", "a ", " a", "", "\tb", "c\t", "x y"}

func joinLines(bom bool, ls []string, eol string, finalNL bool) []byte {
	var b bytes.Buffer
	if bom {
		b.WriteString("\xef\xbb\xbf")
	}
	for i, l := range ls {
		b.WriteString(l)
		if i < len(ls)-1 || finalNL {
			b.WriteString(eol)
		}
	}
	return b.Bytes()
}

// FuzzApply builds a random file and a random edit of it, as hunks with
// random context, and checks that Apply gives the edited file and that the
// reversed hunks give back the original bytes.
func FuzzApply(f *testing.F) {
	f.Add([]byte{0, 1, 0, 5, 0, 1, 2, 3, 4, 2, 1, 1, 2, 1, 0})
	f.Add([]byte{1, 0, 1, 3, 1, 1, 1, 0, 2, 2, 5, 6, 1, 1})
	f.Add([]byte{1, 2, 0, 0, 0, 0, 1, 3, 1})
	f.Add([]byte{0, 0, 1, 7, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 0, 2, 1, 2, 2, 1, 1})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		crlf := r.next(2) == 1
		finalNL := r.next(2) == 0
		hasBOM := r.next(2) == 1
		orig := make([]string, r.next(10))
		for i := range orig {
			orig[i] = fuzzAlphabet[r.next(len(fuzzAlphabet))]
		}
		eol := "\n"
		if crlf {
			eol = "\r\n"
		}
		// A last line "" without a newline is no line at all.
		if len(orig) == 0 || orig[len(orig)-1] == "" {
			finalNL = true
		}
		var fwd, rev []Hunk
		var newLines []string
		prevEnd := 0
		touchesEnd := false
		for range 1 + r.next(3) {
			start := prevEnd + r.next(3)
			if start > len(orig) {
				break
			}
			del := min(r.next(3), len(orig)-start)
			ins := make([]string, r.next(3))
			for i := range ins {
				ins[i] = fuzzAlphabet[r.next(len(fuzzAlphabet))]
			}
			oS := max(start-r.next(3), prevEnd)
			oE := min(start+del+r.next(3), len(orig))
			old := append([]string(nil), orig[oS:oE]...)
			nw := append(append(append([]string(nil), orig[oS:start]...), ins...), orig[start+del:oE]...)
			newLines = append(newLines, orig[prevEnd:oS]...)
			nS := len(newLines)
			newLines = append(newLines, nw...)
			startLine := func(s, n int) int {
				if n == 0 {
					return s // an empty range is "after line s"
				}
				return s + 1
			}
			fwd = append(fwd, Hunk{Old: old, New: nw, OldStart: startLine(oS, len(old)), HasRange: true, CRLF: crlf})
			rev = append(rev, Hunk{Old: nw, New: old, OldStart: startLine(nS, len(nw)), HasRange: true, CRLF: crlf})
			prevEnd = oE
			touchesEnd = oE == len(orig)
		}
		newLines = append(newLines, orig[prevEnd:]...)
		newFinalNL := finalNL
		if touchesEnd && len(fwd) > 0 {
			newFinalNL = r.next(2) == 0 || len(newLines) == 0 || newLines[len(newLines)-1] == ""
			last, rlast := &fwd[len(fwd)-1], &rev[len(rev)-1]
			if !finalNL && len(orig) > 0 {
				last.OldNoEOL, rlast.NewNoEOL = true, true
			}
			if !newFinalNL && len(newLines) > 0 {
				last.NewNoEOL, rlast.OldNoEOL = true, true
			}
		}
		if len(newLines) == 0 {
			newFinalNL = true
		}
		origBytes := joinLines(hasBOM, orig, eol, finalNL)
		wantNew := joinLines(hasBOM, newLines, eol, newFinalNL)

		res, err := Apply(origBytes, fwd)
		if err != nil {
			t.Fatalf("apply %q with %+v: %v", origBytes, fwd, err)
		}
		if !bytes.Equal(res.Content, wantNew) {
			t.Fatalf("apply %q with %+v:\ngot  %q\nwant %q", origBytes, fwd, res.Content, wantNew)
		}
		for _, m := range res.Matched {
			if m != MatchExact {
				t.Fatalf("matched %v", res.Matched)
			}
		}
		back, err := Apply(res.Content, rev)
		if err != nil {
			t.Fatalf("reverse apply %q with %+v: %v", res.Content, rev, err)
		}
		if !bytes.Equal(back.Content, origBytes) {
			t.Fatalf("reverse apply %q with %+v:\ngot  %q\nwant %q", res.Content, rev, back.Content, origBytes)
		}
		// The same edit with LF hunks on a CRLF file matches, at "eol".
		if crlf && len(orig) > 1 {
			lf := append([]Hunk(nil), fwd...)
			for i := range lf {
				lf[i].CRLF = false
			}
			// (A last line without newline matches either ending, so a
			// hunk may find an exact match there instead; only when every
			// hunk matched at "eol" is the result sure to be the same.)
			res2, err := Apply(origBytes, lf)
			if err != nil {
				t.Fatalf("LF hunks on CRLF file %q: %v", origBytes, err)
			}
			allEOL := true
			for _, m := range res2.Matched {
				allEOL = allEOL && m == MatchEOL
			}
			if err != nil || (allEOL && !bytes.Equal(res2.Content, wantNew)) {
				t.Fatalf("LF hunks on CRLF file %q: %+v, %v; want %q", origBytes, res2, err, wantNew)
			}
		}
	})
}
