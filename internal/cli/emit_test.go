package cli

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestEscapeControls(t *testing.T) {
	cases := []struct {
		in   string
		name bool
		want string
	}{
		{"plain\ttext\n", false, "plain\ttext\n"},
		{"a\x1b[31mred\n", false, `a\x1b[31mred` + "\n"},
		{"two\r\nlines\n", false, "two\r\nlines\n"},
		{"over\rwrite\n", false, `over\x0dwrite` + "\n"},
		{"new\nline", true, `new\x0aline`},
		{"crlf\r\nname", true, `crlf\x0d\x0aname`},
		{"bell\a\x7f", true, `bell\x07\x7f`},
		// C1 controls, as UTF-8 (U+009B is CSI) and as lone bytes.
		{"c1 \u009b31m \u0085 \u0080\u009f", false, `c1 \xc2\x9b31m \xc2\x85 \xc2\x80\xc2\x9f`},
		{"lone \x9b31m", true, `lone \x9b31m`},
		// Invalid UTF-8: each byte; valid text (U+00A0 and up, U+FFFD itself) kept.
		{"caf\xe9 \xff\xfe \xe2\x82", false, `caf\xe9 \xff\xfe \xe2\x82`},
		{"café € 日本 \U0001F600 \ufffd \u00a0", true, "café € 日本 \U0001F600 \ufffd \u00a0"},
	}
	for _, c := range cases {
		if got := string(escapeControls([]byte(c.in), c.name)); got != c.want {
			t.Errorf("%q (name %v): got %q want %q", c.in, c.name, got, c.want)
		}
		if got := string(escapeControls(escapeControls([]byte(c.in), c.name), c.name)); got != c.want {
			t.Errorf("%q (name %v): escaping twice changed it: %q", c.in, c.name, got)
		}
	}
	p := &output{}
	if got := string(p.safe([]byte("\x1b"))); got != "\x1b" {
		t.Error("a pipeline must get the bytes unchanged")
	}
}

// rawControl reports the first byte of out a terminal could obey: a C0
// control but tab and newline (a CR only before a newline), DEL, a C1
// control as UTF-8, or a byte that is not valid UTF-8.
func rawControl(out []byte) (int, bool) {
	for i := 0; i < len(out); {
		c := out[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\t' && c != '\n' && !(c == '\r' && i+1 < len(out) && out[i+1] == '\n')) || c == 0x7f {
				return i, true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(out[i:])
		if (r == utf8.RuneError && size == 1) || (r >= 0x80 && r <= 0x9f) {
			return i, true
		}
		i += size
	}
	return 0, false
}

// The ttyWriter gives the same bytes as escaping the whole output at
// once, however the output is cut into writes: a CR before a newline,
// UTF-8 sequences and C1 controls split across writes included.
func TestTTYWriterSplits(t *testing.T) {
	alphabet := []string{"a", "\n", "\r", "\r\n", "\t", "\x1b", "\x07", "\x7f", "\u009b", "\x9b", "é", "€", "\U0001F600", "\xff", "\xe2\x82", "[31m"}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 2000; n++ {
		var in []byte
		for k := rng.IntN(24); k >= 0; k-- {
			in = append(in, alphabet[rng.IntN(len(alphabet))]...)
		}
		var out bytes.Buffer
		w := &ttyWriter{w: &out}
		for rest := in; len(rest) > 0; {
			k := 1 + rng.IntN(len(rest))
			if n, err := w.Write(rest[:k]); n != k || err != nil {
				t.Fatalf("Write: %d, %v", n, err)
			}
			rest = rest[k:]
		}
		if err := w.close(); err != nil {
			t.Fatal(err)
		}
		if want := escapeControls(in, false); !bytes.Equal(out.Bytes(), want) {
			t.Fatalf("%q: split writes gave %q, want %q", in, out.Bytes(), want)
		}
		if i, bad := rawControl(out.Bytes()); bad {
			t.Fatalf("%q: raw control at %d of %q", in, i, out.Bytes())
		}
	}
}

// On a terminal, JSON carries C1 controls as \u0080-\u009f (encoding/json
// leaves them raw), however the output is split; the document decodes to
// the same strings.
func TestC1WriterSplits(t *testing.T) {
	if got := string(escapeC1([]byte("a\u009b2J \u0085\u00a0é\xc2"))); got != `a\u009b2J \u0085`+"\u00a0é\xc2" {
		t.Errorf("escapeC1: %q", got)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []string{"a", "\u009b", "\u0080", "\u009f", "\u00a0", "é", "\u00c2", "\x1b", "\n", "\ufffd", `"`, `\`}
	for n := 0; n < 1000; n++ {
		var s strings.Builder
		for k := rng.IntN(16); k >= 0; k-- {
			s.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		doc, _ := json.Marshal(map[string]string{"name": s.String()})
		var out bytes.Buffer
		w := &c1Writer{w: &out}
		for rest := doc; len(rest) > 0; {
			k := 1 + rng.IntN(len(rest))
			w.Write(rest[:k])
			rest = rest[k:]
		}
		w.close()
		if i, bad := rawControl(out.Bytes()); bad {
			t.Fatalf("%q: raw control at %d of %q", doc, i, out.Bytes())
		}
		var back map[string]string
		if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["name"] != s.String() {
			t.Fatalf("%q: decodes to %q, %v", out.Bytes(), back["name"], err)
		}
	}
}
