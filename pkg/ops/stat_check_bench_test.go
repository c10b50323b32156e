package ops

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// BenchmarkStatCheck checks every .go file of a copy of $GOROOT/src/net,
// all unchanged (the stat-check-net bench row, without the process).
func BenchmarkStatCheck(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(runtime.GOROOT(), "src", "net")
	var entries []string
	filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || !strings.HasSuffix(p, ".go") {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		dst := filepath.Join(dir, "net", rel)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		entries = append(entries, filepath.ToSlash(filepath.Join("net", rel))+"="+hex.EncodeToString(sum[:]))
		return nil
	})
	if len(entries) == 0 {
		b.Skip("no Go source tree")
	}
	sb, err := sandbox.New(policy.DefaultPolicy(dir), "")
	if err != nil {
		b.Fatal(err)
	}
	defer sb.Close()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := StatCheck(context.Background(), sb, CheckOptions{Entries: entries})
		if err != nil || len(res.Unchanged) != len(entries) {
			b.Fatalf("%v: %d unchanged of %d", err, len(res.Unchanged), len(entries))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(entries)), "µs/file")
}
