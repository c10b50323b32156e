package ops

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func testSandbox(t testing.TB) (*sandbox.Sandbox, string) {
	t.Helper()
	dir := t.TempDir()
	sb, err := sandbox.New(policy.DefaultPolicy(dir), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb, dir
}

// refSlice is Python's lines[start:end] over lines split the way SPEC
// says: terminators kept, a last line without newline is a line.
func refSlice(data []byte, start, end *int64) [][]byte {
	var lines [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			lines = append(lines, data)
			break
		}
		lines = append(lines, data[:i+1])
		data = data[i+1:]
	}
	n := int64(len(lines))
	norm := func(p *int64, def int64) int64 {
		if p == nil {
			return def
		}
		v := *p
		if v < 0 {
			v += n
			if v < 0 {
				v = 0
			}
		}
		if v > n {
			v = n
		}
		return v
	}
	s, e := norm(start, 0), norm(end, n)
	if s >= e {
		return nil
	}
	return lines[s:e]
}

func checkSlice(t *testing.T, sb *sandbox.Sandbox, dir string, data []byte, start, end *int64) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	checkSliceOf(t, sb, "f.txt", data, start, end)
	// Standard input, read forward only, gives the same lines (a
	// negative bound holds only the lines it may still need).
	in, err := sandbox.New(sb.Policy(), "") // stdin is read once per call
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	in.SetStdin(bytes.NewReader(data))
	checkSliceOf(t, in, "-", data, start, end)
}

func checkSliceOf(t *testing.T, sb *sandbox.Sandbox, path string, data []byte, start, end *int64) {
	t.Helper()
	var got [][]byte
	res, err := Slice(context.Background(), sb, SliceOptions{Path: path, Start: start, End: end, Exact: true, Sink: func(l []byte) error {
		got = append(got, append([]byte(nil), l...))
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := refSlice(data, start, end)
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("%s: data %q [%v:%v]: got %q want %q", path, data, show(start), show(end), got, want)
	}
	if res.Count != int64(len(want)) {
		t.Fatalf("%s: count %d, want %d", path, res.Count, len(want))
	}
	if res.Line != nil && len(want) > 0 {
		all := refSlice(data, nil, nil)
		if first := all[*res.Line-1]; !bytes.Equal(first, want[0]) {
			t.Fatalf("%s: data %q [%v:%v]: line %d is %q, the first returned %q", path, data, show(start), show(end), *res.Line, first, want[0])
		}
	}
	if res.Total != nil {
		if n := int64(len(refSlice(data, nil, nil))); *res.Total != n {
			t.Fatalf("data %q [%v:%v]: total %d, want %d", data, show(start), show(end), *res.Total, n)
		}
	}
}

func show(p *int64) string {
	if p == nil {
		return ""
	}
	return fmt.Sprint(*p)
}

func TestSliceMatchesPython(t *testing.T) {
	sb, dir := testSandbox(t)
	rng := rand.New(rand.NewSource(1))
	pieces := []string{"a", "bb", "", "\r", "ccc ddd", "\xff\xfe", "é"}
	for iter := 0; iter < 400; iter++ {
		var b bytes.Buffer
		for n := rng.Intn(12); n > 0; n-- {
			b.WriteString(pieces[rng.Intn(len(pieces))])
			if rng.Intn(4) == 0 {
				b.WriteString("\r\n")
			} else {
				b.WriteString("\n")
			}
		}
		if rng.Intn(3) == 0 {
			b.WriteString("tail-without-newline")
		}
		bound := func() *int64 {
			if rng.Intn(4) == 0 {
				return nil
			}
			v := int64(rng.Intn(31) - 15)
			return &v
		}
		checkSlice(t, sb, dir, b.Bytes(), bound(), bound())
	}
}

func TestSliceLongLinesAndBlocks(t *testing.T) {
	sb, dir := testSandbox(t)
	// Lines longer than the read block, and a tail crossing block edges.
	long := bytes.Repeat([]byte("x"), 300<<10)
	data := append(append(append([]byte{}, long...), '\n'), []byte("short\n")...)
	data = append(data, long...)
	for _, s := range []int64{-1, -2, -3, 0, 1, 2} {
		s := s
		checkSlice(t, sb, dir, data, &s, nil)
	}
}

func FuzzSlice(f *testing.F) {
	f.Add([]byte("a\nb\nc\n"), int64(-2), int64(3), true)
	f.Add([]byte("a\r\nb"), int64(0), int64(-1), false)
	f.Add([]byte(""), int64(5), int64(-5), true)
	f.Fuzz(func(t *testing.T, data []byte, s, e int64, hasEnd bool) {
		sb, dir := testSandbox(t)
		var end *int64
		if hasEnd {
			end = &e
		}
		checkSlice(t, sb, dir, data, &s, end)
	})
}
