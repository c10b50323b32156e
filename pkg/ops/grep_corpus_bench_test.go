package ops

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// loadCorpus reads up to 64 MiB of the tree FSBOX_CORPUS names (a kernel
// source tree, say): BenchmarkCorpus times the line finder on real code
// in searchBuf blocks, as grep searches it.
func loadCorpus(b *testing.B) []byte {
	dir := os.Getenv("FSBOX_CORPUS")
	if dir == "" {
		b.Skip("FSBOX_CORPUS not set")
	}
	var buf []byte
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() || len(buf) > 64<<20 {
			return nil
		}
		d, _ := os.ReadFile(p)
		buf = append(buf, d...)
		if len(d) > 0 && d[len(d)-1] != '\n' {
			buf = append(buf, '\n')
		}
		return nil
	})
	return buf
}

func BenchmarkCorpus(b *testing.B) {
	buf := loadCorpus(b)
	for _, c := range []struct {
		name string
		p    string
		i    bool
	}{{"alt4i", "ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT", true}, {"alt4", "ERR_SYS|PME_TURN_OFF|LINK_REQ_RST|CFG_BME_EVT", false}, {"suffix", "[A-Z]+_RESUME", false}, {"nolit", `\w{5}\s+\w{5}\s+\w{5}\s+\w{5}\s+\w{5}`, false}, {"todo", "TODO|FIXME", false}} {
		m, err := newMatcher(c.p, false, c.i, false, false)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			for b.Loop() {
				n := 0
				for from := 0; from < len(buf); {
					to := min(from+searchBuf, len(buf))
					if i := bytes.LastIndexByte(buf[from:to], '\n'); i >= 0 && to < len(buf) {
						to = from + i + 1
					}
					block := buf[from:to]
					var st scanState
					for pos := 0; ; {
						s, e := m.next(block, pos, &st)
						if s < 0 {
							break
						}
						n++
						pos = e
					}
					from = to
				}
			}
		})
	}
}
