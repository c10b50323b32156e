package textio

import (
	"bytes"
	"io"
	"math/rand"
	"strings"
	"testing"
	"testing/iotest"
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

// TestReadLineMax reads lines of every length around the cap and around
// block edges: a line within the cap comes whole, a longer one as its
// head with its full length, and the lines after it are unharmed.
func TestReadLineMax(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	for iter := 0; iter < 300; iter++ {
		max := 1 + rng.Intn(40)
		block := 1 + rng.Intn(64)
		var lines []string
		var in strings.Builder
		for n := rng.Intn(12); n > 0; n-- {
			l := strings.Repeat(string(rune('a'+rng.Intn(26))), rng.Intn(3*max+2))
			if rng.Intn(3) == 0 {
				l += "\r"
			}
			lines = append(lines, l)
			in.WriteString(l + "\n")
		}
		text := in.String()
		trimmed := rng.Intn(2) == 0 && len(lines) > 0 // a last line without newline
		if trimmed {
			text = strings.TrimSuffix(text, "\n")
		}
		r := NewReader(iotest.OneByteReader(strings.NewReader(text)), block)
		if rng.Intn(2) == 0 {
			r = NewReader(strings.NewReader(text), block)
		}
		for i, want := range lines {
			full := want + "\n"
			if i == len(lines)-1 && trimmed {
				full = want
			}
			if full == "" {
				break // an empty last line without newline is no line
			}
			got, n, err := r.ReadLineMax(max)
			if err != nil {
				t.Fatalf("iter %d line %d (max %d, block %d, text %q): %v", iter, i, max, block, text, err)
			}
			wantGot := full
			if len(full) > max {
				wantGot = full[:max]
			}
			if string(got) != wantGot || n != int64(len(full)) {
				t.Fatalf("iter %d (max %d, block %d) line %d: got %q, %d; want %q, %d", iter, max, block, i, got, n, wantGot, len(full))
			}
		}
		if _, _, err := r.ReadLineMax(max); err != io.EOF {
			t.Fatalf("iter %d: want io.EOF at the end, got %v", iter, err)
		}
	}
}

// TestReadLineMaxBoundsTheBuffer reads a 64 MiB line with a 1 KiB cap:
// the reader's buffer must not grow with the line.
func TestReadLineMaxBoundsTheBuffer(t *testing.T) {
	const size = 64 << 20
	r := NewReader(io.MultiReader(io.LimitReader(repeatReader('x'), size), strings.NewReader("\nnext\n")), 0)
	got, n, err := r.ReadLineMax(1024)
	if err != nil || len(got) != 1024 || n != size+1 {
		t.Fatalf("got %d bytes, n %d, %v", len(got), n, err)
	}
	if len(r.buf) > 2*DefaultBufSize {
		t.Errorf("buffer grew to %d bytes for a cut line", len(r.buf))
	}
	if got, _, _ := r.ReadLineMax(1024); string(got) != "next\n" {
		t.Errorf("the line after a cut one: %q", got)
	}
}

type repeatReader byte

func (b repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}
