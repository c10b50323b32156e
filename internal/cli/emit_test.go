package cli

import "testing"

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
		{"bell\a\x7f", true, `bell\x07\x7f`},
	}
	for _, c := range cases {
		if got := string(escapeControls([]byte(c.in), c.name)); got != c.want {
			t.Errorf("%q (name %v): got %q want %q", c.in, c.name, got, c.want)
		}
	}
	p := &printer{}
	if got := string(p.safe([]byte("\x1b"))); got != "\x1b" {
		t.Error("a pipeline must get the bytes unchanged")
	}
}
