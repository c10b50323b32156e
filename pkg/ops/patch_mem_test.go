//go:build unix

package ops

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// bigPatch is an envelope of n one-line hunks over a file of n lines,
// each changing one line ("a%06d" to "b%06d"): 21 bytes of patch per
// hunk, 8 bytes of file per line.
func bigPatch(n int) (file, text []byte) {
	var f, p bytes.Buffer
	p.WriteString("*** Begin Patch\n*** Update File: f.txt\n")
	for i := range n {
		fmt.Fprintf(&f, "a%06d\n", i)
		fmt.Fprintf(&p, "@@\n-a%06d\n+b%06d\n", i, i)
	}
	p.WriteString("*** End Patch\n")
	return f.Bytes(), p.Bytes()
}

// peakHeap runs fn while sampling HeapInuse every millisecond, and
// returns the largest sample less the one taken, after a collection,
// before fn started: the most the heap grew while fn ran, garbage not yet
// collected included.
func peakHeap(fn func()) (peak uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var max atomic.Uint64
	max.Store(base)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > max.Load() {
				max.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	if ms.HeapInuse > max.Load() {
		max.Store(ms.HeapInuse)
	}
	return max.Load() - base
}

// Fails on 6a21fbf: peak heap growth 336 to 390 MiB for an 8 MiB patch of 400k
// hunks on a 3 MiB file (hunks held whole with a copy of every line, a
// map entry per line of the file, a diff built by repeated growth), over
// the bound of 51 MiB.
//
// The bound: 4 times the patch, plus the file, plus 16 MiB. Patch holds
// the text (the caller's), the file's old and new content, its diff, and
// a few bytes per line and per hunk. The call goes through the operation's
// Run with the text as a tool argument (the input built beforehand).
func TestPatchMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("an 8 MiB patch")
	}
	dir := t.TempDir()
	file, text := bigPatch(400_000)
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	p := policy.DefaultPolicy(dir)
	p.Journal.State = t.TempDir()
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	op, _ := Registry.Lookup("patch")
	in := spec.NewInput(op).Set("patch", string(text))
	text = nil
	var res any
	peak := peakHeap(func() {
		res, err = op.Run(context.Background(), sb, in)
	})
	if err != nil {
		t.Fatal(err)
	}
	patchLen := len(in.String("patch"))
	bound := uint64(4*patchLen + len(file) + 16<<20)
	t.Logf("patch %d bytes, file %d bytes: peak heap growth %.1f MiB (bound %.1f MiB)", patchLen, len(file), mib(peak), mib(bound))
	if peak > bound {
		t.Errorf("patch grew the heap by %.1f MiB, over 4 × the patch + the file + 16 MiB = %.1f MiB", mib(peak), mib(bound))
	}
	got, err := os.ReadFile(filepath.Join(dir, "f.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.ReplaceAll(file, []byte("a"), []byte("b")); !bytes.Equal(got, want) {
		t.Errorf("the patched file is not every line changed")
	}
	if b, _ := json.Marshal(res); !bytes.Contains(b, []byte(`"replacements":400000`)) {
		t.Errorf("result: %.200s", b)
	}
}

func mib(n uint64) float64 { return float64(n) / (1 << 20) }
