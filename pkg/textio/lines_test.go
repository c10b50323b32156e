package textio

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
)

// TestReaderAgainstSplit checks SkipLines, AppendLines, ReadLine and
// LineStartFromEnd against a plain split, with tiny blocks so that lines
// cross block edges.
func TestReaderAgainstSplit(t *testing.T) {
	rng := rand.New(rand.NewSource(9))
	for iter := 0; iter < 500; iter++ {
		var b strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			b.WriteString(strings.Repeat("x", rng.Intn(9)))
			b.WriteString([]string{"\n", "\r\n"}[rng.Intn(2)])
		}
		if rng.Intn(2) == 0 {
			b.WriteString("tail")
		}
		data := []byte(b.String())
		lines := SplitLines(data)
		block := 1 + rng.Intn(7)
		k := int64(rng.Intn(len(lines) + 2))

		r := NewReader(bytes.NewReader(data), block)
		if got := r.SkipLines(k); got != min(k, int64(len(lines))) {
			t.Fatalf("%q: SkipLines(%d) = %d", data, k, got)
		}
		rest, n, _ := r.AppendLines(nil, -1, 1<<20)
		want := bytes.Join(lines[min(int(k), len(lines)):], nil)
		if !bytes.Equal(rest, want) || n != int64(len(lines)-min(int(k), len(lines))) {
			t.Fatalf("%q: after %d lines got %q (%d), want %q", data, k, rest, n, want)
		}

		r = NewReader(bytes.NewReader(data), block)
		var got [][]byte
		for {
			l, err := r.ReadLine()
			if err == io.EOF {
				break
			}
			got = append(got, append([]byte(nil), l...))
		}
		if len(got) != len(lines) {
			t.Fatalf("%q: ReadLine gave %d lines, want %d", data, len(got), len(lines))
		}

		if k >= 1 {
			off, err := LineStartFromEnd(bytes.NewReader(data), int64(len(data)), k, make([]byte, block))
			if err != nil {
				t.Fatal(err)
			}
			wantOff := 0
			if int(k) < len(lines) {
				wantOff = len(bytes.Join(lines[:len(lines)-int(k)], nil))
			}
			if off != int64(wantOff) {
				t.Fatalf("%q: LineStartFromEnd(%d) = %d, want %d", data, k, off, wantOff)
			}
		}
	}
}

func TestEOLAndTrim(t *testing.T) {
	for in, want := range map[string]string{"a\nb\n": "lf", "a\r\nb\r\n": "crlf", "a\r\nb\n": "mixed", "ab": "none"} {
		if got := EOL([]byte(in)); got != want {
			t.Errorf("EOL(%q) = %s, want %s", in, got, want)
		}
	}
	if string(TrimEOL([]byte("x\r\n"))) != "x" || string(TrimEOL([]byte("x\n"))) != "x" || string(TrimEOL([]byte("x\r"))) != "x\r" {
		t.Error("TrimEOL strips exactly one \\n or \\r\\n")
	}
}
