package cli

import (
	"testing"

	"github.com/fsbox/fsbox/pkg/ops"
)

// BenchmarkRunStat is one `fsbox stat FILE` call without the process
// start: what the command line itself costs (make bench measures the
// whole process against /usr/bin/stat).
func BenchmarkRunStat(b *testing.B) {
	fx := newFixture(b, map[string]string{"main.go": "package main\n"}, "")
	b.ReportAllocs()
	for b.Loop() {
		if _, errb, code := fx.run(ops.Registry, "stat", "main.go"); code != 0 {
			b.Fatal(errb)
		}
	}
}
