//go:build unix

package main

import "testing"

// The regression rule: slower by more than max(5 % of the baseline, 0.2 ms).
func TestBaselineVerdict(t *testing.T) {
	for _, c := range []struct {
		cur, base float64 // medians, ms
		killed    string  // "cur", "base", "both" or ""
		want      string
	}{
		{1.19, 1.00, "", "ok"},           // +0.19 ms: under the 0.2 ms floor
		{1.21, 1.00, "", "REGRESSION"},   // +0.21 ms, +21 %
		{0.79, 1.00, "", "faster"},       // -0.21 ms
		{10.4, 10.0, "", "ok"},           // +4 %
		{10.6, 10.0, "", "REGRESSION"},   // +6 %, +0.6 ms
		{104.9, 100.0, "", "ok"},         // +4.9 %
		{105.1, 100.0, "", "REGRESSION"}, // +5.1 %
		{94.0, 100.0, "", "faster"},
		{60000, 500, "cur", "REGRESSION"},
		{500, 60000, "base", "faster"},
		{60000, 60000, "both", "both killed"},
	} {
		cur, base := &stats{MedianMs: c.cur, MaxMs: c.cur}, &stats{MedianMs: c.base, MaxMs: c.base}
		if c.killed == "cur" || c.killed == "both" {
			cur.Killed = "time"
		}
		if c.killed == "base" || c.killed == "both" {
			base.Killed = "time"
		}
		if got := baselineVerdict(cur, base); got != c.want {
			t.Errorf("baselineVerdict(%v ms, %v ms, killed %q) = %q, want %q", c.cur, c.base, c.killed, got, c.want)
		}
	}
}
