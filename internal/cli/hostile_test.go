package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hostile names and contents — newlines, ANSI escapes, invalid UTF-8 —
// never break the JSON or NDJSON framing and never put a raw control byte
// on stdout: each document parses, each NDJSON line is one whole value.
// (The text form escapes them on a terminal: TestEscapeControls.)
func TestHostileOutputFraming(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"a\nb.txt":          "line one\nsecond \x1b]0;title\x07 evil\n",
		"\x1b[31mred.txt":   "\x1b[2J evil\r\n",
		"bad\xff.txt":       "caf\xe9 evil \xff\n",
		"tab\tand\rcr.txt":  "evil\x00binary",
		"quote\"back\\.txt": "evil \"quoted\" \\ back\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	// In-process: Landlock would confine the test binary itself.
	policy := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte("workdir = \""+dir+"\"\n[sandbox]\nlandlock = \"off\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FSBOX_CONFIG", policy)
	for _, args := range [][]string{
		{"ls"}, {"find", "."}, {"grep", "evil", "."}, {"grep", "-c", "evil", "."}, {"grep", "-l", "evil", "."},
		{"read", "a\nb.txt"}, {"read", "\x1b[31mred.txt"}, {"read", "bad\xff.txt"}, {"stat", "\x1b[31mred.txt"},
		{"wc", "a\nb.txt", "bad\xff.txt"}, {"slice", "a\nb.txt", "0", "2"}, {"sort", "\x1b[31mred.txt"},
		{"cut", "-f", "1", "a\nb.txt"}, {"read", "no\x1b[such"},
	} {
		for _, format := range []string{"json", "ndjson"} {
			var out, errb bytes.Buffer
			argv := append([]string{"fsbox", "--format", format}, args...)
			code := Main(argv, strings.NewReader(""), &out, &errb)
			if code > 1 && code != 4 {
				t.Errorf("%q: exit %d: %s", argv, code, errb.String())
			}
			for name, stream := range map[string][]byte{"stdout": out.Bytes(), "stderr": errb.Bytes()} {
				for _, c := range stream {
					if c < 0x20 && c != '\n' {
						t.Errorf("%q: raw control byte %#x on %s: %q", argv, c, name, stream)
						break
					}
				}
				if len(stream) == 0 {
					continue
				}
				lines := [][]byte{bytes.TrimSuffix(stream, []byte("\n"))}
				if format == "ndjson" || name == "stderr" {
					lines = bytes.Split(lines[0], []byte("\n"))
				}
				for _, l := range lines {
					if !json.Valid(l) {
						t.Errorf("%q: %s is not whole JSON values, one per line: %q", argv, name, stream)
					}
				}
			}
		}
	}
}
