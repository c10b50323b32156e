//go:build unix

package main

import "testing"

func TestNearestVersion(t *testing.T) {
	vs := []string{"0.6.2", "2025.12.18", "2026.1.14", "2026.7.10", "2026.9.1-rc.1", "2026.10.2"}
	for _, c := range []struct{ want, got string }{
		{"2026.7.10", "2026.7.10"},
		{"2026.8.31", "2026.7.10"}, // the nearest earlier release
		{"2026.1.2", "2025.12.18"}, // numbers, not strings
		{"0.1.0", ""},
	} {
		if got := nearestVersion(vs, c.want); got != c.got {
			t.Errorf("nearestVersion(%s) = %q, want %q", c.want, got, c.got)
		}
	}
}
