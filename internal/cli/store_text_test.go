package cli

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/ops"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestStoreTextEscapes: store check's text form (which runs only on a
// bucket, so TestTextFormEscapesOnTerminal cannot run it) passes every
// field a server or a key could choose through the terminal's escaping:
// a probe's detail, the outside detail, the scratch URL.
func TestStoreTextEscapes(t *testing.T) {
	evil := "x\x1b[31m\u009b\a\ry\xff\n"
	r := &ops.StoreCheckResult{StoreReport: sandbox.StoreReport{
		Root: "s3://bkt/" + evil, Scratch: "s3://bkt/" + evil + "/.fsbox-store-check-0/",
		Outside: sandbox.Outside{Reaches: true, Detail: "outside " + evil},
		Probes:  []sandbox.ProbeResult{{Name: "cond_get", OK: true, Detail: evil}, {Name: "suffix_range", Detail: "412 " + evil}},
		Removed: true,
	}}
	var buf bytes.Buffer
	w := textWriter{Writer: bufio.NewWriter(&buf), p: &output{tty: true}}
	if err := r.Text(w); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	out := buf.Bytes()
	if i, bad := rawControl(out); bad {
		t.Errorf("raw control byte %#x at %d reached the terminal: %q", out[i], i, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "ok\tcond_get\t") || !strings.HasPrefix(lines[1], "FAIL\tsuffix_range\t") ||
		!strings.HasPrefix(lines[2], "outside\treaches\t") || !strings.HasPrefix(lines[3], "scratch\tremoved\ts3://bkt/") {
		t.Errorf("text form: %q", out)
	}
}
