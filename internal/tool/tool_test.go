package tool

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

func code(err error) fserr.Code {
	if err == nil {
		return ""
	}
	return fserr.AsError(err).Code
}

// TestSplit: a tool call's own arguments (timeout, cursor, expect) come
// off its arguments; what is no JSON object is passed on for
// spec.FromJSON to refuse.
func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in, rest string
		d        time.Duration
		code     fserr.Code
	}{
		{`{"path":"a","timeout":1.5}`, `{"path":"a"}`, 1500 * time.Millisecond, ""},
		{`{"path":"a"}`, `{"path":"a"}`, 0, ""},
		{`{"timeout":0}`, `{}`, 0, fserr.CodeUsage},
		{`{"timeout":"1s"}`, `{}`, 0, fserr.CodeUsage},
		{`{"timeout":1e300}`, `{}`, 1<<63 - 1, ""},
		{`[1]`, `[1]`, 0, ""},
	} {
		rest, d, err := SplitTimeout(json.RawMessage(c.in))
		if string(rest) != c.rest || d != c.d || code(err) != c.code {
			t.Errorf("SplitTimeout(%s) = %s, %v, %v", c.in, rest, d, err)
		}
	}
	for _, c := range []struct{ in, rest, cursor string }{
		{`{"path":"a","cursor":"c1"}`, `{"path":"a"}`, "c1"},
		{`{"path":"a"}`, `{"path":"a"}`, ""},
	} {
		rest, cursor, err := SplitCursor(json.RawMessage(c.in))
		if string(rest) != c.rest || cursor != c.cursor || err != nil {
			t.Errorf("SplitCursor(%s) = %s, %q, %v", c.in, rest, cursor, err)
		}
	}
	if _, _, err := SplitCursor(json.RawMessage(`{"cursor":3}`)); code(err) != fserr.CodeUsage {
		t.Errorf("a cursor that is no string: %v", err)
	}
	sum := `"` + string(make64('a')) + `"`
	for _, c := range []struct {
		op, in, rest string
		code         fserr.Code
	}{
		{"write", `{"path":"a","expect":"absent"}`, `{"expect_absent":true,"path":"a"}`, ""},
		{"write", `{"path":"a","expect":` + sum + `}`, `{"expect_sha256":` + sum + `,"path":"a"}`, ""},
		{"cp", `{"src":"a","dst":"b","expect":` + sum + `}`, `{"dst":"b","expect_sha256":[` + sum + `],"force":true,"src":"a"}`, ""},
		{"cp", `{"src":"a","dst":"b","expect":"absent"}`, `{"dst":"b","src":"a"}`, ""},
		{"cp", `{"src":"a","dst":"b","expect":"absent","force":true}`, ``, fserr.CodeUsage},
		{"edit", `{"path":"a","expect":"absent"}`, ``, fserr.CodeUsage},
		{"edit", `{"path":"a","expect":"nope"}`, ``, fserr.CodeUsage},
		{"write", `{"path":"a","expect":"absent","expect_absent":true}`, ``, fserr.CodeUsage},
		{"read", `{"path":"a","expect":"absent"}`, `{"path":"a","expect":"absent"}`, ""}, // no expect: spec.FromJSON refuses it
	} {
		rest, err := SplitExpect(c.op, json.RawMessage(c.in))
		if code(err) != c.code || (c.code == "" && string(rest) != c.rest) {
			t.Errorf("SplitExpect(%s, %s) = %s, %v", c.op, c.in, rest, err)
		}
	}
}

func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}

// TestAuditRecord: the record's verdict and error follow the exit status
// the command line gives.
func TestAuditRecord(t *testing.T) {
	denied := &fserr.Error{Code: fserr.CodeDenied, Rule: fserr.RuleDeny, Path: ".env"}
	for _, c := range []struct {
		name    string
		err     error
		code    int
		verdict string
		ecode   fserr.Code
	}{
		{"ok", nil, 0, "ok", ""},
		{"no match", &fserr.Error{Code: fserr.CodeNoMatch}, 1, "no_match", ""},
		{"denied", denied, ExitCode(fserr.CodeDenied), "denied", fserr.CodeDenied},
		{"a closed pipe", errors.New("write: broken pipe"), ExitClosedPipe, "error", fserr.CodeIO},
		{"cut", &fserr.Error{Code: fserr.CodeTruncated}, 9, "error", fserr.CodeTruncated},
	} {
		rec := AuditRecord(nil, "grep", time.Now(), c.err, c.code)
		var ecode fserr.Code
		if rec.Error != nil {
			ecode = rec.Error.Code
		}
		if rec.Verdict != c.verdict || ecode != c.ecode || rec.Exit != c.code || rec.Command != "grep" {
			t.Errorf("%s: %+v", c.name, rec)
		}
	}
	if rec := AuditRecord(nil, "cat", time.Now(), denied, 3); rec.Error.Rule != fserr.RuleDeny || rec.Error.Path != ".env" {
		t.Errorf("a denial's record names its rule and path: %+v", rec.Error)
	}
	for c, want := range map[fserr.Code]int{fserr.CodeUsage: 2, fserr.CodeNotFound: 4, fserr.CodeTimeout: 9, "unknown": 7} {
		if got := ExitCode(c); got != want {
			t.Errorf("ExitCode(%s) = %d, want %d", c, got, want)
		}
	}
}

// TestErrorJSON: the error object, its hint spelled by the face.
func TestErrorJSON(t *testing.T) {
	err := fserr.Errorf(fserr.CodeExists, "b", "b exists:").WithHint(sandbox.HintReplace)
	got := string(ErrorJSON(err, func(h *fserr.Hint) string { return `"` + h.Option + `": true` }))
	want := `{"error":{"code":"exists","message":"b exists: pass \"force\": true to replace it","path":"b"}}`
	if got != want {
		t.Errorf("ErrorJSON = %s\nwant %s", got, want)
	}
}
