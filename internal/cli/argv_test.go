package cli

import (
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/ops"
)

func grepFlags(name string) (flagSet, bool) {
	op, ok := ops.Registry.Lookup(name)
	if !ok {
		return nil, false
	}
	return specFlags(op), true
}

func TestReorder(t *testing.T) {
	global := flagsOf(globalFlags())
	cases := []struct{ in, want string }{
		{"fsbox grep TODO main.go --numbered", "fsbox grep --numbered -- TODO main.go"},
		{"fsbox grep -- --numbered notes.txt", "fsbox grep -- --numbered notes.txt"},
		{"fsbox slice big.log -10", "fsbox slice -- big.log -10"},
		{"fsbox grep TODO . --format text", "fsbox --format text grep -- TODO ."},
		{"fsbox grep -inA3 x", "fsbox grep --ignore-case --numbered --after-context 3 -- x"},
		{"fsbox grep x -g a --glob=b", "fsbox grep --glob a --glob=b -- x"},
		{"fsbox read a.txt --limit 5 --offset=2", "fsbox read --limit 5 --offset=2 -- a.txt"},
		{"fsbox --pretty ls -a", "fsbox --pretty ls --all --"},
		// As getopt: a flag that takes a value takes the next word, even "--".
		{"fsbox grep -A -- x", "fsbox grep --after-context -- -- x"},
		// -0 is a command's own short flag (--null), not a negative
		// number; -01 is one, and a two-letter argument stays one.
		{"fsbox grep -l -0 x", "fsbox grep --files-with-matches --null -- x"},
		{"fsbox find -0", "fsbox find --null --"},
		{"fsbox slice f -0", "fsbox slice -- f -0"},
		{"fsbox grep -01 x", "fsbox grep -- -01 x"},
		{"fsbox grep al a.txt", "fsbox grep -- al a.txt"},
	}
	for _, c := range cases {
		got := strings.Join(reorder(strings.Fields(c.in), global, grepFlags), " ")
		if got != c.want {
			t.Errorf("%q:\ngot  %q\nwant %q", c.in, got, c.want)
		}
	}
}

// FuzzReorder: reordering never panics, never drops or reorders the
// positional arguments, and keeps everything after "--" positional.
func FuzzReorder(f *testing.F) {
	for _, s := range []string{"grep TODO main.go --numbered", "slice x -10", "grep -- -v x", "read --limit", "grep -A", "-x", "grep -inA3 x -- --y", "grep -A -- -A"} {
		f.Add(s)
	}
	global := flagsOf(globalFlags())
	f.Fuzz(func(t *testing.T, line string) {
		args := append([]string{"fsbox"}, strings.Split(line, " ")...)
		out := reorder(args, global, grepFlags)
		if len(out) == 0 || out[0] != "fsbox" {
			t.Fatalf("argv[0] lost: %q", out)
		}
		// Arguments after an explicit "--" come through in order. A "--"
		// right after a flag that takes a value is that value, as getopt
		// has it (grep -A -- x: "--" is the context length).
		if i := terminator(args, global, grepFlags); i >= 0 {
			tail := args[i+1:]
			if j := indexOf(out, "--"); j >= 0 && len(tail) > 0 {
				got := out[len(out)-len(tail):]
				if strings.Join(got, "\x00") != strings.Join(tail, "\x00") {
					t.Fatalf("%q: the part after -- changed: %q", args, out)
				}
			}
		}
	})
}

// terminator is the index of the first "--" in args that is not a flag's
// value, or -1.
func terminator(args []string, global flagSet, command func(string) (flagSet, bool)) int {
	fs := flagSet{}
	for k, v := range global {
		fs[k] = v
	}
	if len(args) > 1 {
		if cf, ok := command(args[1]); ok {
			for k, v := range cf {
				fs[k] = v
			}
		}
	}
	for i := 1; i < len(args); i++ {
		tok := args[i]
		if tok == "--" {
			return i
		}
		if !isFlag(tok) || strings.Contains(tok, "=") {
			continue
		}
		name := strings.TrimLeft(tok, "-")
		if _, known := fs[name]; known || strings.HasPrefix(tok, "--") {
			if fs[name].value {
				i++
			}
			continue
		}
		for j := range len(name) { // -inA: the letter taking a value ends the group
			if fs[name[j:j+1]].value {
				if j == len(name)-1 {
					i++
				}
				break
			}
		}
	}
	return -1
}

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}
