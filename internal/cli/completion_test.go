package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/ops"
)

// TestBashCompletion sources the generated bash script and completes the
// lines users type: values of global flags, the command after them,
// enumerated flag values and arguments, command names as arguments.
func TestBashCompletion(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	script, err := Completion(ops.Registry, "bash")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "fsbox.bash")
	os.WriteFile(file, []byte(script), 0o644)
	os.WriteFile(filepath.Join(dir, "grape.txt"), nil, 0o644)
	for _, c := range []struct {
		line string // the words; the last is the one being completed
		want []string
		not  []string
	}{
		{"fsbox --format ''", []string{"json", "ndjson", "text"}, []string{"grep"}},
		{"fsbox --format text gr", []string{"grep"}, []string{"grape.txt"}},
		{"fsbox --color ''", []string{"auto", "always", "never"}, nil},
		{"fsbox completion ''", []string{"bash", "zsh", "fish"}, nil},
		{"fsbox find -t ''", []string{"f", "d", "l"}, nil},
		{"fsbox find --type ''", []string{"f", "d", "l"}, nil},
		{"fsbox man ''", []string{"grep", "read", "write"}, nil},
		{"fsbox explain ''", []string{"rm", "mv"}, nil},
		{"fsbox read --encoding ''", []string{"utf-8", "base64"}, nil},
		{"fsbox grep --", []string{"--ignore-case", "--no-filename", "--format"}, nil},
		{"fsbox grep -A ''", nil, []string{"grape.txt", "--ignore-case"}},
		{"fsbox grep TODO gra", []string{"grape.txt"}, nil},
		{"fsbox-find -t ''", []string{"f", "d", "l"}, nil},
	} {
		words := strings.Fields(c.line)
		for i, w := range words {
			if w == "''" {
				words[i] = ""
			}
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + file + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + ")\nCOMP_CWORD=" +
			string(rune('0'+len(words)-1)) + "\n_fsbox\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "-c", prog)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s: %v\n%s", c.line, err, out)
			continue
		}
		got := strings.Fields(string(out))
		has := func(w string) bool {
			for _, g := range got {
				if g == w {
					return true
				}
			}
			return false
		}
		for _, w := range c.want {
			if !has(w) {
				t.Errorf("%s<TAB>: %v, want %s among them", c.line, got, w)
			}
		}
		for _, w := range c.not {
			if has(w) {
				t.Errorf("%s<TAB>: %v, want no %s", c.line, got, w)
			}
		}
	}
}
