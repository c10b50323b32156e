package ops

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGrepBufferEdges searches files built around the read buffer: lines
// longer than it (a match at either end of one, in a file that ends
// without a newline, and in one too big to grow to at once), matches on
// lines that straddle block boundaries, and a NUL found only after the
// first block. Each is checked against a plain split-and-Contains.
func TestGrepBufferEdges(t *testing.T) {
	sb, dir := testSandbox(t)
	long := func(n int, fill byte) string { return string(bytes.Repeat([]byte{fill}, n)) }
	var straddle strings.Builder
	for i := 0; straddle.Len() < 3*searchBuf; i++ {
		fmt.Fprintf(&straddle, "line %d %s\n", i, long(i%97, 'x'))
		if i%50 == 0 {
			straddle.WriteString("needle here\n")
		}
	}
	files := map[string]string{
		"long_end.txt":     long(searchBuf+10, 'a') + "needle\nshort needle\n",
		"long_start.txt":   "needle" + long(3*searchBuf, 'b') + "\nno\nneedle\n",
		"long_noeol.txt":   "x\n" + long(2*searchBuf, 'c') + "needle",
		"straddle.txt":     straddle.String(),
		"late_binary.txt":  "needle\n" + long(2*searchBuf, 'd') + "\n\x00needle\n",
		"exact_buffer.txt": long(searchBuf-7, 'e') + "needle\n",
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range files {
		res, err := Grep(context.Background(), sb, GrepOptions{Pattern: "needle", Paths: []string{name}, Fixed: true, Exact: true})
		if err != nil && !strings.Contains(err.Error(), "no match") {
			t.Fatalf("%s: %v", name, err)
		}
		// A named binary file is searched: its matches say where, not what.
		binary := strings.Contains(data, "\x00")
		var want []string
		for i, line := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
			switch {
			case !strings.Contains(line, "needle"):
			case binary:
				want = append(want, fmt.Sprintf("%d:binary", i+1))
			default:
				want = append(want, fmt.Sprintf("%d:%d:%s", i+1, len(line), line[max(0, len(line)-20):]))
			}
		}
		var got []string
		for _, m := range *res.Matches {
			if m.Binary {
				got = append(got, fmt.Sprintf("%d:binary", m.Line))
				continue
			}
			got = append(got, fmt.Sprintf("%d:%d:%s", m.Line, len(m.Text), m.Text[max(0, len(m.Text)-20):]))
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s:\ngot  %v\nwant %v", name, got, want)
		}
	}
}
