//go:build unix

package ops

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
	"github.com/fsbox/fsbox/pkg/spec"
)

// TestStatSeveralPaths runs stat as a tool call runs it (the descriptor's
// input from JSON): one path is the object it always was; more_paths makes
// it {files[], count, truncated, errors[]}, where a missing path is
// exists:false, a denied one is reported by the path as given, and only
// every path failing fails the call.
func TestStatSeveralPaths(t *testing.T) {
	dir := t.TempDir()
	tree(t, dir, map[string]string{"a.txt": "four", "secret/k": "key", "l": "-> a.txt"})
	p := policy.DefaultPolicy(dir)
	p.Paths.Deny = []string{"secret"}
	sb, err := sandbox.New(p, "")
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	run := func(args string) (spec.Result, error) {
		t.Helper()
		in, err := spec.FromJSON(statOp, json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		return statOp.Run(context.Background(), sb, in)
	}
	cases := []struct {
		args, want string
		code       fserr.Code // of the call, or of Failed()
	}{
		{`{"path": "a.txt"}`, `{"path":"a.txt","exists":true,"type":"file","size":4,"mtime":"M","mode":"0644"}`, ""},
		{`{"path": "a.txt", "more_paths": []}`, `{"path":"a.txt","exists":true,"type":"file","size":4,"mtime":"M","mode":"0644"}`, ""},
		{`{"path": "a.txt", "more_paths": ["nope", "l"]}`,
			`{"files":[{"path":"a.txt","exists":true,"type":"file","size":4,"mtime":"M","mode":"0644"},{"path":"nope","exists":false,"size":0},{"path":"l","exists":true,"type":"symlink","size":5,"mtime":"M","mode":"0777","target":"a.txt"}],"count":3,"truncated":false}`, ""},
		{`{"path": "secret/k", "more_paths": ["a.txt", "../out"]}`,
			`{"files":[{"path":"a.txt","exists":true,"type":"file","size":4,"mtime":"M","mode":"0644"}],"count":1,"truncated":false,"errors":[{"path":"secret/k","code":"denied","message":"secret/k is denied by the policy"},{"path":"../out","code":"denied","message":"../out is denied by the policy"}]}`, fserr.CodeDenied},
		{`{"path": "secret/k", "more_paths": ["secret"]}`, "", fserr.CodeDenied},
		{`{"path": "a.txt", "more_paths": ["x\u0000y"]}`, "", fserr.CodeUsage},
	}
	for _, c := range cases {
		v, err := run(c.args)
		if c.want == "" {
			if fserr.AsError(err).Code != c.code {
				t.Errorf("%s: error %v, want %s", c.args, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.args, err)
			continue
		}
		b, _ := json.Marshal(v)
		var got map[string]any
		json.Unmarshal(b, &got)
		normalize(got)
		nb, _ := json.Marshal(got)
		var want map[string]any
		json.Unmarshal([]byte(c.want), &want)
		wb, _ := json.Marshal(want)
		if string(nb) != string(wb) {
			t.Errorf("%s:\n got  %s\n want %s", c.args, b, c.want)
		}
		failed := v.Outcome().Failures
		switch {
		case c.code == "" && failed != nil:
			t.Errorf("%s: Failures.First = %v, want none", c.args, failed.First)
		case c.code != "" && (failed == nil || fserr.AsError(failed.First).Code != c.code):
			t.Errorf("%s: want Failures.First of code %s", c.args, c.code)
		}
	}
}

// normalize writes "M" for every mtime: the test compares shapes.
func normalize(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "mtime" {
				x[k] = "M"
				continue
			}
			normalize(e)
		}
	case []any:
		for _, e := range x {
			normalize(e)
		}
	}
}
