package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// openPTY gives a pseudo-terminal in raw mode (no output processing, so
// the bytes fsbox writes to the slave arrive unchanged at the master).
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { m.Close() })
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := term.MakeRaw(int(s.Fd())); err != nil {
		t.Fatal(err)
	}
	if !isTerminal(s) {
		t.Fatal("the pty slave is not a terminal")
	}
	return m, s
}

// ptyReader collects what reaches the master; take returns everything
// up to the next end mark the test wrote after a call.
type ptyReader struct {
	chunks chan []byte
	buf    []byte
}

const endMark = "\n--end of call--\n"

func newPTYReader(m *os.File) *ptyReader {
	r := &ptyReader{chunks: make(chan []byte, 64)}
	go func() {
		for {
			b := make([]byte, 32<<10)
			n, err := m.Read(b)
			if n > 0 {
				r.chunks <- b[:n]
			}
			if err != nil {
				close(r.chunks)
				return
			}
		}
	}()
	return r
}

func (r *ptyReader) take(t *testing.T) []byte {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		if i := bytes.Index(r.buf, []byte(endMark)); i >= 0 {
			out := r.buf[:i]
			r.buf = r.buf[i+len(endMark):]
			return out
		}
		select {
		case c, ok := <-r.chunks:
			if !ok {
				t.Fatal("the pty closed")
			}
			r.buf = append(r.buf, c...)
		case <-deadline:
			t.Fatalf("no end mark from the pty; have %q", r.buf)
		}
	}
}

var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// Every text printer, on a terminal, escapes what a hostile name, link
// target or field holds: no ESC, BEL, lone CR, C1 control or invalid
// UTF-8 byte reaches the terminal raw, and a newline in a name does not
// start another line. stdout is a real pseudo-terminal, so this is the
// path a user's terminal gets (the printer's own tty detection included).
func TestTextFormEscapesOnTerminal(t *testing.T) {
	master, slave := openPTY(t)
	pty := newPTYReader(master)

	// Names a terminal would obey: OSC title + BEL, CR, CSI as C1 (UTF-8
	// and raw byte), invalid UTF-8, a newline.
	const evil = "e\x1b]0;pwn\x07\r\u009b2J\x9b\xff\n"
	base := t.TempDir()
	work := filepath.Join(base, "w"+evil+"dir")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(work, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(evil+".txt", "a\x1b[31m\tb\u009b\x07\n\x1b]8;;x\x07c\r\td\xff\n")
	write("plain.txt", "one\x1b[2J\n")
	if err := os.Symlink("t"+evil+"arget", filepath.Join(work, "l"+evil)); err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	policy := filepath.Join(t.TempDir(), "policy.toml")
	tomlStr := func(s string) string { // TOML basic string: escape every byte but printable ASCII
		var b strings.Builder
		b.WriteByte('"')
		for _, r := range s {
			if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r >= 0x80 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
		b.WriteByte('"')
		return b.String()
	}
	if !strings.Contains(evil, "\xff") || strings.ToValidUTF8(work, "") == work {
		t.Fatal("the fixture must hold invalid UTF-8")
	}
	// TOML cannot hold invalid UTF-8: the workdir is named through a
	// symlink with a valid (but still hostile) name.
	alias := filepath.Join(base, "alias\x1b[31m\u009b\a")
	if err := os.Symlink(work, alias); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte("workdir = "+tomlStr(alias)+"\nread_roots = ["+tomlStr(alias)+"]\n[commands]\nrm = true\npurge = true\n[sandbox]\nlandlock = \"off\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FSBOX_CONFIG", policy)
	t.Setenv("XDG_STATE_HOME", t.TempDir()) // the journal, away from the real one

	cases := []struct {
		args  []string
		lines int // lines expected on stdout; -1: not counted
	}{
		{[]string{"ls", "-a"}, 3},
		{[]string{"stat", evil + ".txt"}, 1},
		{[]string{"stat", "l" + evil}, 1},
		{[]string{"stat", "missing" + evil}, 1},
		{[]string{"wc", evil + ".txt", "plain.txt"}, 3},
		{[]string{"cut", "-f", "1,2", evil + ".txt"}, 2},
		{[]string{"cut", "-f", "2", "--output-delimiter", "\x1b[0m", evil + ".txt"}, 2},
		{[]string{"cut", "--csv", "-f", "1", evil + ".txt"}, -1},
		{[]string{"explain", "read", evil + ".txt"}, 1},
		{[]string{"explain", "write", "l" + evil}, 1},
		{[]string{"roots"}, -1},
		{[]string{"links", "bin" + evil, "--prefix", "p\x1b]0;x\x07-"}, -1},
		{[]string{"read", evil + ".txt"}, 2},
		{[]string{"slice", evil + ".txt", "0", "2"}, 2},
		{[]string{"sort", evil + ".txt"}, 2},
		{[]string{"find", "."}, -1},
		{[]string{"grep", "-n", "a", "."}, -1},
		{[]string{"grep", "-l", "a", "."}, 1},
		{[]string{"grep", "-c", "a", "."}, -1},
		{[]string{"write", "new" + evil, "--content", "x\x1b[31m"}, 1},
		{[]string{"edit", "new" + evil, "--old", "x", "--new", "y\u009b\a", "--dry-run"}, -1},
		{[]string{"patch", "--patch", "*** Begin Patch\n*** Add File: p\x1b]0;pwn\a\u009b2J.txt\n+x\n*** End Patch\n"}, 1},
		{[]string{"history"}, -1},
		{[]string{"undo"}, 1},
		{[]string{"mkdir", "d" + evil}, 1},
		{[]string{"cp", "plain.txt", "c" + evil}, 1},
		{[]string{"mv", "c" + evil, "m" + evil}, 1},
		{[]string{"rm", "m" + evil}, 1},
		{[]string{"purge"}, 2},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.args[0]] = true
		var errb bytes.Buffer
		code := Main(append([]string{"fsbox", "--format", "text"}, c.args...), strings.NewReader(""), slave, &errb)
		if _, err := slave.WriteString(endMark); err != nil {
			t.Fatal(err)
		}
		out := pty.take(t)
		if code != 0 {
			t.Errorf("%q: exit %d: %s", c.args, code, errb.String())
			continue
		}
		if len(out) == 0 {
			t.Errorf("%q: no output", c.args)
		}
		if c.args[0] == "grep" || c.args[0] == "ls" || c.args[0] == "find" {
			// grep, ls and find colour on a terminal: their own SGR codes
			// are the only escape sequences allowed through.
			out = sgr.ReplaceAll(out, nil)
		}
		if testing.Verbose() {
			t.Logf("%q:\n%s", c.args, out)
		}
		if i, bad := rawControl(out); bad {
			t.Errorf("%q: raw control byte %#x at %d reached the terminal: %q", c.args, out[i], i, out)
		}
		if n := bytes.Count(out, []byte("\n")); c.lines >= 0 && n != c.lines {
			t.Errorf("%q: %d lines on the terminal, want %d: %q", c.args, n, c.lines, out)
		}
	}
	for _, name := range CommandNames() {
		// store runs only on a bucket: TestStoreTextEscapes.
		if !covered[name] && name != "tools" && name != "completion" && name != "man" && name != "mcp" && name != "store" {
			t.Errorf("command %q has a text form: add it to this test", name)
		}
	}

	// JSON and NDJSON on a terminal: encoding/json escapes C0 controls
	// and replaces invalid UTF-8, and C1 controls go out as \u009b; each
	// document still parses to the hostile name.
	for _, args := range [][]string{
		{"ls", "-a"}, {"--format", "ndjson", "ls", "-a"}, {"stat", "l" + evil}, {"read", evil + ".txt"},
		{"--format", "ndjson", "slice", evil + ".txt"}, {"--format", "ndjson", "grep", "a", "."}, {"grep", "a", "."},
		{"--format", "ndjson", "find", "."}, {"explain", "read", evil + ".txt"},
	} {
		code := Main(append([]string{"fsbox"}, args...), strings.NewReader(""), slave, slave)
		slave.WriteString(endMark)
		out := pty.take(t)
		if code != 0 {
			t.Errorf("%q: exit %d: %q", args, code, out)
			continue
		}
		if i, bad := rawControl(out); bad {
			t.Errorf("%q: raw control byte %#x at %d reached the terminal: %q", args, out[i], i, out)
		}
		docs := [][]byte{out}
		if args[0] == "--format" {
			docs = bytes.Split(bytes.TrimSuffix(out, []byte("\n")), []byte("\n"))
		}
		for _, d := range docs {
			if !json.Valid(d) {
				t.Errorf("%q: not JSON: %q", args, d)
			}
		}
		if !bytes.Contains(out, []byte(`\u009b`)) {
			t.Errorf("%q: the C1 control is not there as \\u009b: %q", args, out)
		}
	}
	code := Main([]string{"fsbox", "read", "no" + evil}, strings.NewReader(""), slave, slave)
	slave.WriteString(endMark)
	if out := pty.take(t); code != 4 || !json.Valid(out) || !bytes.Contains(out, []byte(`\u009b`)) {
		t.Errorf("JSON error line on a terminal: exit %d, %q", code, out)
	} else if i, bad := rawControl(out); bad {
		t.Errorf("JSON error line: raw control at %d: %q", i, out)
	} else if !bytes.Contains(out, []byte("\n    \"code\": \"not_found\"")) {
		t.Errorf("a JSON error on a terminal is not indented for a person: %q", out)
	}

	// An error line on a terminal stderr is escaped too.
	code = Main([]string{"fsbox", "--format", "text", "read", "no" + evil}, strings.NewReader(""), slave, slave)
	slave.WriteString(endMark)
	out := pty.take(t)
	if code != 4 || !bytes.HasPrefix(out, []byte("fsbox: not_found: ")) {
		t.Errorf("read of a missing hostile name: exit %d, %q", code, out)
	}
	if i, bad := rawControl(out); bad || bytes.Count(out, []byte("\n")) != 1 {
		t.Errorf("the error line reached the terminal raw (at %d): %q", i, out)
	}
}

// TestNoColor: grep colors on a terminal, and NO_COLOR (no-color.org)
// turns that off; --color always wins over it.
func TestNoColor(t *testing.T) {
	master, slave := openPTY(t)
	pty := newPTYReader(master)
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	os.MkdirAll(work, 0o755)
	os.WriteFile(filepath.Join(work, "a.txt"), []byte("needle\n"), 0o644)
	policy := filepath.Join(dir, "p.toml")
	os.WriteFile(policy, []byte("workdir = "+strconv.Quote(work)+"\n[sandbox]\nlandlock = \"off\"\n"), 0o644)
	t.Setenv("FSBOX_CONFIG", policy)
	run := func(args ...string) []byte {
		var errb bytes.Buffer
		if code := Main(append([]string{"fsbox", "--format", "text", "grep"}, args...), nil, slave, &errb); code != 0 {
			t.Fatalf("%q: exit %d: %s", args, code, errb.String())
		}
		slave.WriteString(endMark)
		return pty.take(t)
	}
	if out := run("needle", "a.txt"); !sgr.Match(out) {
		t.Errorf("no color on a terminal: %q", out)
	}
	t.Setenv("NO_COLOR", "1")
	if out := run("needle", "a.txt"); sgr.Match(out) {
		t.Errorf("NO_COLOR set, still colored: %q", out)
	}
	if out := run("--color", "always", "needle", "a.txt"); !sgr.Match(out) {
		t.Errorf("--color always under NO_COLOR: %q", out)
	}

	// ls and find colour names by type on a terminal (LS_COLORS wins).
	os.MkdirAll(filepath.Join(work, "sub"), 0o755)
	t.Setenv("NO_COLOR", "")
	list := func(cmd ...string) []byte {
		var errb bytes.Buffer
		if code := Main(append([]string{"fsbox", "--format", "text"}, cmd...), nil, slave, &errb); code != 0 {
			t.Fatalf("%q: exit %d: %s", cmd, code, errb.String())
		}
		slave.WriteString(endMark)
		return pty.take(t)
	}
	for _, cmd := range [][]string{{"ls"}, {"find"}} {
		if out := list(cmd...); !bytes.Contains(out, []byte("\x1b[01;34msub\x1b[0m")) || bytes.Contains(out, []byte("\x1b[01;34ma.txt")) {
			t.Errorf("%s on a terminal: %q, want sub in GNU's directory colour", cmd[0], out)
		}
	}
	t.Setenv("LS_COLORS", "di=01;32")
	if out := list("ls"); !bytes.Contains(out, []byte("\x1b[01;32msub\x1b[0m")) {
		t.Errorf("ls under LS_COLORS di=01;32: %q", out)
	}
}

// TestBareCommandOnTerminal: fsbox alone, typed by a person, gets the
// usage text on the terminal and exit 2; a program gets the one-line
// usage error.
func TestBareCommandOnTerminal(t *testing.T) {
	master, slave := openPTY(t)
	pty := newPTYReader(master)
	code := Main([]string{"fsbox"}, nil, slave, slave)
	slave.WriteString(endMark)
	out := pty.take(t)
	if code != 2 || !bytes.Contains(out, []byte("Commands:")) {
		t.Errorf("fsbox alone on a terminal: exit %d, %q", code, out)
	}
	var errb bytes.Buffer
	if code := Main([]string{"fsbox"}, nil, &errb, &errb); code != 2 || !strings.Contains(errb.String(), `"code":"usage","message":"no command given`) {
		t.Errorf("fsbox alone in a pipeline: exit %d, %q", code, errb.String())
	}
}
