package textio

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"
)

// benchLines returns about size bytes of deterministic lines averaging
// lineLen bytes (lengths vary from about half to one and a half times it).
func benchLines(size, lineLen int) []byte {
	b := make([]byte, 0, size+2*lineLen)
	var s uint64 = 0x5eed
	next := func() uint64 { // xorshift64
		s ^= s << 13
		s ^= s >> 7
		s ^= s << 17
		return s
	}
	for i := 0; len(b) < size; i++ {
		start := len(b)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, " latency_ms="...)
		b = strconv.AppendUint(b, next()%1000, 10)
		n := lineLen/2 + int(next()%uint64(lineLen+1))
		for len(b)-start < n-1 {
			b = append(b, "abcdefghij klmnopqrs tuvwxyz "[next()%29])
		}
		b = append(b, '\n')
	}
	return b
}

var benchShapes = []struct {
	name    string
	lineLen int
}{{"short-20B", 20}, {"log-120B", 120}, {"long-4KiB", 4096}}

const benchSize = 16 << 20

// BenchmarkSkipLines skips every line of 16 MiB: newline counting over
// whole blocks, what read --offset pays per byte skipped.
func BenchmarkSkipLines(b *testing.B) {
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			data := benchLines(benchSize, sh.lineLen)
			want := int64(bytes.Count(data, nl))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), 0)
				if got := r.SkipLines(want); got != want {
					b.Fatalf("skipped %d lines, want %d", got, want)
				}
			}
		})
	}
}

// BenchmarkAppendLines collects lines: all of 16 MiB at once, and pages of
// ten lines until the end (the per-call overhead read --limit pays).
func BenchmarkAppendLines(b *testing.B) {
	for _, sh := range benchShapes {
		data := benchLines(benchSize, sh.lineLen)
		want := int64(bytes.Count(data, nl))
		b.Run("all/"+sh.name, func(b *testing.B) {
			dst := make([]byte, 0, len(data))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), 0)
				out, n, cut := r.AppendLines(dst[:0], -1, len(data))
				if n != want || cut || len(out) != len(data) {
					b.Fatalf("got %d lines (%d bytes, cut %v), want %d", n, len(out), cut, want)
				}
			}
		})
		b.Run(fmt.Sprintf("pages-of-10/%s", sh.name), func(b *testing.B) {
			dst := make([]byte, 0, 64<<10)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), 0)
				var total int64
				for {
					out, n, _ := r.AppendLines(dst[:0], 10, 1<<20)
					dst = out
					if n == 0 {
						break
					}
					total += n
				}
				if total != want {
					b.Fatalf("got %d lines, want %d", total, want)
				}
			}
		})
	}
}

// BenchmarkReadLine reads every line of 16 MiB one by one, as grep and
// sort do.
func BenchmarkReadLine(b *testing.B) {
	for _, sh := range benchShapes {
		b.Run(sh.name, func(b *testing.B) {
			data := benchLines(benchSize, sh.lineLen)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r := NewReader(bytes.NewReader(data), 0)
				var n int
				for {
					line, err := r.ReadLine()
					if err != nil {
						break
					}
					n += len(line)
				}
				if n != len(data) {
					b.Fatalf("read %d bytes, want %d", n, len(data))
				}
			}
		})
	}
}
