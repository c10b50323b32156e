package cli

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// An empty path is never a path: every path argument of every command
// refuses "" with usage (exit 2), stdout empty and nothing changed. `ls`
// and `find` with no argument list the workdir; ls with an empty argument used to as well.
func TestEmptyPathIsUsage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	policy := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(policy, []byte("workdir = \""+dir+"\"\n[commands]\nrm = true\nstore = true\n[sandbox]\nlandlock = \"off\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FSBOX_CONFIG", policy)
	// Each command's calls, with "" in each path position in turn.
	calls := map[string][][]string{
		"ls":      {{"ls", ""}, {"ls", "-a", ""}},
		"stat":    {{"stat", ""}, {"stat", "--sha256", ""}},
		"find":    {{"find", ""}, {"find", "", "*.txt"}},
		"grep":    {{"grep", "a", ""}, {"grep", "a", "a.txt", ""}, {"grep", "-l", "a", ""}},
		"wc":      {{"wc", ""}, {"wc", "a.txt", ""}},
		"read":    {{"read", ""}},
		"slice":   {{"slice", ""}, {"slice", "", "0", "1"}},
		"sort":    {{"sort", ""}},
		"cut":     {{"cut", "-f", "1", ""}},
		"write":   {{"write", "", "--content", "x"}, {"write", "", "--append", "--content", "x"}},
		"edit":    {{"edit", "", "--old", "a", "--new", "b"}},
		"mkdir":   {{"mkdir", ""}},
		"mv":      {{"mv", "", "b.txt"}, {"mv", "a.txt", ""}},
		"cp":      {{"cp", "", "b.txt"}, {"cp", "a.txt", ""}},
		"rm":      {{"rm", ""}, {"rm", "-r", ""}},
		"explain": {{"explain", "read", ""}, {"explain", "write", ""}},
		"links":   {{"links", ""}},
		"mcp":     {{"mcp", ""}, {"mcp", ".", ""}},
		"patch":   {{"patch", "--patch-file", ""}},
		"history": {{"history", ""}},
		"store":   {{"store", "check", ""}, {"store", ""}},
	}
	// Commands that take no path argument at all.
	noPath := []string{"roots", "tools", "completion", "man", "undo", "purge"}
	for _, name := range CommandNames() {
		if _, ok := calls[name]; !ok && !slices.Contains(noPath, name) {
			t.Errorf("command %q: add its path arguments to this test (or to noPath)", name)
		}
	}
	for _, args := range slices.Concat(slices.Collect(maps.Values(calls))...) {
		var out, errb bytes.Buffer
		code := Main(append([]string{"fsbox"}, args...), strings.NewReader(""), &out, &errb)
		if code != 2 || !strings.Contains(errb.String(), `"code":"usage"`) || out.Len() != 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want usage (2) and no output", args, code, out.String(), errb.String())
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 || ents[0].Name() != "a.txt" {
			t.Fatalf("%q changed the workdir: %v", args, ents)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a\n" {
			t.Fatalf("%q changed a.txt: %q", args, b)
		}
	}
	// No argument at all is the workdir, for ls and find.
	for _, args := range [][]string{{"ls"}, {"find"}, {"find", "*.txt"}} {
		var out, errb bytes.Buffer
		if code := Main(append([]string{"fsbox"}, args...), strings.NewReader(""), &out, &errb); code != 0 || !strings.Contains(out.String(), "a.txt") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out.String(), errb.String())
		}
	}
}
