package mcpserver

import (
	"reflect"
	"testing"
)

// TestFreshnessTools: the read and stat tools take the freshness
// arguments their descriptors declare (if_none_match; check), and
// answer as the command line does: an unchanged file without content,
// read once (the audit's bytes_read is its size); a changed file read as
// usual; stat's check sorting paths into unchanged[] and changed[].
func TestFreshnessTools(t *testing.T) {
	const sum = "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" // of "hello\n"
	const other = "c8a31cb076b21999bd2cdcfa5f446a7a6644de88037087112fa18bd90cc13984"
	h := newHarness(t, setup{files: map[string]string{"a.txt": "hello\n", "b.txt": "hello!\n"}})
	_, tools := listNames(t, h.cs)
	if tl := tools["fsbox_read"]; tl == nil || !schemaHas(t, tl.InputSchema, "if_none_match") {
		t.Errorf("fsbox_read has no if_none_match argument")
	}
	if tl := tools["fsbox_stat"]; tl == nil || !schemaHas(t, tl.InputSchema, "check") {
		t.Errorf("fsbox_stat has no check argument")
	}

	out := h.ok("fsbox_read", map[string]any{"path": "a.txt", "if_none_match": sum})
	if want := map[string]any{"path": "a.txt", "unchanged": true, "sha256": sum}; !reflect.DeepEqual(out, want) {
		t.Errorf("read, unchanged: %v, want %v", out, want)
	}
	out = h.ok("fsbox_read", map[string]any{"path": "a.txt", "if_none_match": other})
	if out["content"] != "hello\n" || out["sha256"] != sum || out["unchanged"] != nil {
		t.Errorf("read, changed: %v", out)
	}
	h.fail("fsbox_read", map[string]any{"path": "a.txt", "if_none_match": "abc"}, "usage", "")
	for _, r := range h.auditRecords() {
		if r.Command == "read" && r.Verdict == "ok" && r.BytesRead != 6 {
			t.Errorf("read of a 6-byte file counted %d bytes read", r.BytesRead)
		}
	}

	out = h.ok("fsbox_stat", map[string]any{"path": "a.txt=" + sum, "more_paths": []string{"b.txt=" + sum, "c.txt=absent"}, "check": true})
	want := map[string]any{
		"changed":   []any{map[string]any{"path": "b.txt", "exists": true, "sha256": other}},
		"unchanged": []any{"a.txt", "c.txt"}, "count": float64(3), "truncated": false,
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("stat check: %v, want %v", out, want)
	}
	h.fail("fsbox_stat", map[string]any{"path": "a.txt", "check": true}, "usage", "")
}

// schemaHas reports whether a tool's input schema has property name.
func schemaHas(t *testing.T, schema any, name string) bool {
	t.Helper()
	s, _ := jsonOf(t, schema).(map[string]any)
	m, ok := s["properties"].(map[string]any)
	return ok && m[name] != nil
}
