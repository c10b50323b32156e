package ops

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// benchSandbox is a sandbox under the built-in default policy whose
// workdir is a fresh temporary directory holding the given files.
func benchSandbox(b *testing.B, files map[string][]byte) *sandbox.Sandbox {
	b.Helper()
	dir := b.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	sb, err := sandbox.New(policy.DefaultPolicy(dir), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	return sb
}

// benchLog returns exactly size bytes of deterministic log-like lines of
// about 120 bytes, the last one cut short but ending in a newline.
func benchLog(size int) []byte {
	b := make([]byte, 0, size+256)
	var s uint64 = 0x10961061
	next := func() uint64 { // xorshift64
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		return s
	}
	levels := []string{"INFO ", "INFO ", "INFO ", "WARN ", "ERROR", "DEBUG"}
	for i := 0; len(b) < size; i++ {
		b = append(b, "2025-01-01T00:00:"...)
		b = strconv.AppendInt(b, int64(10+i%50), 10)
		b = append(b, ".123Z "...)
		b = append(b, levels[next()%uint64(len(levels))]...)
		b = append(b, " req="...)
		b = strconv.AppendUint(b, next(), 16)
		b = append(b, " GET /v1/items/"...)
		b = strconv.AppendUint(b, next()%100000, 10)
		b = append(b, " status=200 latency_ms="...)
		b = strconv.AppendUint(b, next()%1000, 10)
		for n := next() % 5; n > 0; n-- {
			b = append(b, " cache miss"...)
		}
		b = append(b, '\n')
	}
	b = b[:size]
	b[size-1] = '\n'
	return b
}

// BenchmarkRead1MiB reads a whole file of exactly max_read_bytes, as
// `fsbox read FILE` does: open through the sandbox, sha256, EOL sniffing,
// UTF-8 validation, the content as a string.
func BenchmarkRead1MiB(b *testing.B) {
	data := benchLog(1 << 20)
	sb := benchSandbox(b, map[string][]byte{"f.log": data})
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Read(context.Background(), sb, ReadOptions{Path: "f.log"})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Content) != len(data) {
			b.Fatalf("read %d bytes, want %d", len(res.Content), len(data))
		}
	}
}

// BenchmarkReadPage reads ten lines at an offset 90% into a 64 MiB file,
// over max_read_bytes, so it streams. The bytes per op are those skipped.
func BenchmarkReadPage(b *testing.B) {
	data := benchLog(64 << 20)
	lines := int64(bytes.Count(data, []byte{'\n'}))
	offset := lines * 9 / 10
	skipped := 0
	for range offset {
		skipped += bytes.IndexByte(data[skipped:], '\n') + 1
	}
	sb := benchSandbox(b, map[string][]byte{"big.log": data})
	b.SetBytes(int64(skipped))
	b.ReportAllocs()
	for b.Loop() {
		res, err := Read(context.Background(), sb, ReadOptions{Path: "big.log", Offset: offset, Limit: 10})
		if err != nil {
			b.Fatal(err)
		}
		if res.Lines != 10 {
			b.Fatalf("got %d lines, want 10", res.Lines)
		}
	}
}

// BenchmarkStat describes one file through the sandbox, and with --sha256
// hashes 1 MiB.
func BenchmarkStat(b *testing.B) {
	sb := benchSandbox(b, map[string][]byte{"small.txt": []byte("alpha\nbeta\n"), "f.log": benchLog(1 << 20)})
	b.Run("plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := Stat(context.Background(), sb, StatOptions{Path: "small.txt"})
			if err != nil || !res.Exists {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("missing", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := Stat(context.Background(), sb, StatOptions{Path: "no/such/file"})
			if err != nil || res.Exists {
				b.Fatal(res, err)
			}
		}
	})
	b.Run("sha256-1MiB", func(b *testing.B) {
		b.SetBytes(1 << 20)
		b.ReportAllocs()
		for b.Loop() {
			res, err := Stat(context.Background(), sb, StatOptions{Path: "f.log", SHA256: true})
			if err != nil || res.SHA256 == nil {
				b.Fatal(res, err)
			}
		}
	})
}

// benchTree is the directory BenchmarkGrepTree searches: FSBOX_BENCH_TREE
// when set (a copy of a real source tree, as make bench uses), else a
// generated tree of 40 directories of 50 Go-like files of about 8 KiB.
func benchTree(b *testing.B) *sandbox.Sandbox {
	b.Helper()
	dir := os.Getenv("FSBOX_BENCH_TREE")
	if dir == "" {
		dir = b.TempDir()
		src := benchLog(8 << 10)
		for d := range 40 {
			sub := filepath.Join(dir, "pkg"+strconv.Itoa(d), "internal")
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range 50 {
				data := src
				if f == 7 {
					data = append([]byte("package main\n\nfunc main() {}\n"), src...)
				}
				if err := os.WriteFile(filepath.Join(sub, "f"+strconv.Itoa(f)+".go"), data, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	p := policy.DefaultPolicy(dir)
	p.Limits.MaxResults = 1 << 40
	sb, err := sandbox.New(p, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sb.Close() })
	return sb
}

// BenchmarkGrepTree searches a whole tree for a literal, as
// `fsbox grep -n 'func main' TREE` does.
func BenchmarkGrepTree(b *testing.B) {
	sb := benchTree(b)
	b.ReportAllocs()
	for b.Loop() {
		res, err := Grep(context.Background(), sb, GrepOptions{Pattern: "func main"})
		if err != nil {
			b.Fatal(err)
		}
		if res.Count == 0 {
			b.Fatal("no match")
		}
	}
}
