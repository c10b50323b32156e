package s3test_test

// End-to-end tests of the real binaries (fsbox, fsbox-s3, fsbox-mcp) on a
// real S3 server (versitygw, internal/s3test): tenancy, keys refused
// before any request, the read side of every command, [store]
// max_requests, TLS after Landlock, credentials, and the handover from
// the lean binaries to fsbox-s3. The changing commands are in
// cli_s3_change_test.go.
//
// Each call runs fsbox as a child with a clean environment: PATH, a HOME
// of the test's own (XDG_* under it), the server's AWS environment
// (Server.Env), FSBOX_CONFIG naming a policy written outside every root,
// and FSBOX_TENANT.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/fsbox/fsbox/internal/s3test"
	"github.com/fsbox/fsbox/internal/testbin"
)

const bkt = "bkt"

// fixture is a server with the bucket bkt seeded (seed), the built
// binaries, and a directory outside every root for policies and homes.
type fixture struct {
	s    *s3test.Server
	bin  string
	dir  string
	home string
	ab   map[string]string // tenant ab's objects: key below ab/ -> content
	n    int
}

func newFixture(t *testing.T, opts ...s3test.Option) *fixture {
	t.Helper()
	s := s3test.Start(t, opts...) // first: without a server the test skips before any build
	bin := testbin.Dir(t)
	s.Bucket(t, bkt)
	dir := t.TempDir()
	f := &fixture{s: s, bin: bin, dir: dir, home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(f.home, 0o755); err != nil {
		t.Fatal(err)
	}
	f.seed(t)
	return f
}

// abFiles is tenant ab's seed (keys below ab/): 46 objects and an empty
// directory marker dir/.
func abFiles() map[string]string {
	m := map[string]string{
		"x":              "hello ab/x\n",
		"lines.txt":      "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n",
		"t.csv":          "b,2\na,10\nc,1\n",
		"docs/readme.md": "# readme\nneedle in ab\n",
	}
	var long strings.Builder
	for i := range 20 {
		fmt.Fprintf(&long, "line %02d: %s\n", i, strings.Repeat("x", 25))
	}
	m["long.txt"] = long.String()
	var big strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "big line %05d\n", i)
	}
	m["big.txt"] = big.String()
	for p := range 4 {
		for f := range 10 {
			m[fmt.Sprintf("src/pkg%d/file%d.go", p, f)] = fmt.Sprintf("package pkg%d\n\n// file %d\nfunc F%d() int { return %d }\n", p, f, f, f)
		}
	}
	return m
}

// The other tenants' keys and the bucket's top: none of them may show
// to tenant ab. Every one holds SECRET.
var foreign = map[string]string{
	"abc/x":                 "hello abc/x SECRET\n",
	"abc/secret.txt":        "needle SECRET-abc\n",
	"abc/src/pkg0/file0.go": "package pkg0 // SECRET-abc needle\n",
	"top.txt":               "needle SECRET-top\n",
	"ab.txt":                "needle SECRET-abdot\n",
	"ab-other/z.txt":        "needle SECRET-abdash\n",
}

func (f *fixture) seed(t *testing.T) {
	t.Helper()
	f.ab = abFiles()
	for k, v := range f.ab {
		f.s.Put(t, bkt, "ab/"+k, []byte(v))
	}
	f.s.Put(t, bkt, "ab/dir/", nil)
	for k, v := range foreign {
		f.s.Put(t, bkt, k, []byte(v))
	}
	f.s.Put(t, bkt, "shared/s.txt", []byte("hello shared\n"))
}

// policy writes a policy (workdir s3://bkt/${FSBOX_TENANT}, read root
// s3://bkt/shared, the journal in s3://bkt/journal/${FSBOX_TENANT},
// [store] reaching the server) and returns its path: top goes before
// [store] (tables of its own), store into [store]. A top with a
// [journal] table of its own replaces the journal's (a writable object
// root needs one in the store, else the policy is config).
func (f *fixture) policy(t *testing.T, top, store string) string {
	t.Helper()
	return f.policyAt(t, f.s.Endpoint(), top, store)
}

// journalTable is the journal policy's default: in the bucket, outside
// every root, one per tenant.
const journalTable = "[journal]\ndir = \"s3://" + bkt + "/journal/${FSBOX_TENANT}\"\n"

func (f *fixture) policyAt(t *testing.T, endpoint, top, store string) string {
	t.Helper()
	if !strings.Contains(top, "[journal]") {
		top += "\n" + journalTable
	}
	return f.policyText(t, fmt.Sprintf("workdir = \"s3://%s/${FSBOX_TENANT}\"\nread_roots = [\"s3://%s/shared\"]\n%s\n[store]\nendpoint = %q\npath_style = true\nregion = \"us-east-1\"\n%s\n",
		bkt, bkt, top, endpoint, store))
}

// policyText writes text as a policy outside every root and returns its
// path.
func (f *fixture) policyText(t *testing.T, text string) string {
	t.Helper()
	f.n++
	p := filepath.Join(f.dir, fmt.Sprintf("policy-%d.toml", f.n))
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// env is the child's environment: the clean base, the server's AWS
// settings, FSBOX_CONFIG and FSBOX_TENANT (left out when tenant is nil).
func (f *fixture) env(cfg string, tenant *string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + f.home,
		"XDG_CONFIG_HOME=" + filepath.Join(f.home, ".config"),
		"XDG_STATE_HOME=" + filepath.Join(f.home, ".state"),
		"XDG_CACHE_HOME=" + filepath.Join(f.home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(f.home, ".local"),
		"FSBOX_CONFIG=" + cfg,
	}
	env = append(env, f.s.Env()...)
	if tenant != nil {
		env = append(env, "FSBOX_TENANT="+*tenant)
	}
	return env
}

func ptr(s string) *string { return &s }

// result is one call's end.
type result struct {
	args           []string
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("fsbox %q: exit %d\nstdout: %s\nstderr: %s", r.args, r.code, r.stdout, r.stderr)
}

// run runs fsbox as tenant under cfg.
func (f *fixture) run(t *testing.T, cfg, tenant string, args ...string) result {
	t.Helper()
	return f.runWith(t, "fsbox", f.env(cfg, &tenant), "", args...)
}

// runWith runs the binary name of the built set with env and stdin (none:
// /dev/null); a call that takes over a minute is a hang.
func (f *fixture) runWith(t *testing.T, name string, env []string, stdin string, args ...string) result {
	t.Helper()
	return runBin(t, filepath.Join(f.bin, name), f.home, env, stdin, args...)
}

func runBin(t *testing.T, bin, dir string, env []string, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := exec.CommandContext(ctx, bin, args...)
	c.Dir, c.Env = dir, env
	if stdin != "" { // else /dev/null: grep searches a pipe on stdin
		c.Stdin = strings.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	r := result{args: args, stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("fsbox %q did not end within a minute (a hang)\nstderr: %s", args, errb.String())
	case errors.As(err, &ee):
		r.code = ee.ExitCode()
	case err != nil:
		t.Fatalf("fsbox %q: %v", args, err)
	}
	if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
		t.Fatalf("a panic: %s", r)
	}
	return r
}

// ok asserts exit 0 and returns stdout as a JSON object.
func (r result) ok(t *testing.T) map[string]any {
	t.Helper()
	return r.exit(t, 0)
}

// exit asserts the exit status and returns stdout as a JSON object.
func (r result) exit(t *testing.T, code int) map[string]any {
	t.Helper()
	if r.code != code {
		t.Fatalf("want exit %d, got %s", code, r)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("stdout is not a JSON object (%v): %s", err, r)
	}
	return m
}

// m0 is stdout as a JSON object, nil when it is none.
func m0(r result) map[string]any {
	var m map[string]any
	json.Unmarshal([]byte(r.stdout), &m)
	return m
}

// errBody is an error's {"error":{...}} on stderr.
type errBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path"`
	Rule    string `json:"rule"`
}

// fail asserts the exit status and the error's code, and returns the
// error.
func (r result) fail(t *testing.T, exit int, code string) errBody {
	t.Helper()
	e, ok := r.errOf()
	if !ok {
		t.Fatalf("want error %s (exit %d), got no error JSON on stderr: %s", code, exit, r)
	}
	if r.code != exit || e.Code != code {
		t.Fatalf("want %s exit %d, got %s exit %d: %s", code, exit, e.Code, r.code, r)
	}
	if e.Message == "" {
		t.Fatalf("an error without a message: %s", r)
	}
	if strings.TrimSpace(r.stdout) != "" {
		t.Fatalf("an error with a stdout: %s", r)
	}
	return e
}

func (r result) errOf() (errBody, bool) {
	var env struct {
		Error *errBody `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stderr), &env); err != nil || env.Error == nil {
		return errBody{}, false
	}
	return *env.Error, true
}

// request is one line of the server's request log.
type request struct {
	status, method, path, query string
	line                        string
}

func (q request) String() string { return q.line }

// requestsSince parses the server's request log after its first mark
// lines.
func (f *fixture) requestsSince(t *testing.T, mark int) []request {
	t.Helper()
	lines := f.s.Requests(t)
	var out []request
	for _, l := range lines[mark:] {
		fs := strings.SplitN(l, " | ", 4)
		if len(fs) != 4 {
			t.Fatalf("a request line of %d fields: %q", len(fs), l)
		}
		out = append(out, request{status: fs[0], method: fs[1], path: fs[2], query: fs[3], line: l})
	}
	return out
}

func (f *fixture) mark(t *testing.T) int { return len(f.s.Requests(t)) }

// inPrefixes reports whether q reaches only keys under one of prefixes
// (each with its slash): an object path /bkt/PREFIX/..., or a listing of
// /bkt whose prefix= starts with PREFIX/.
func inPrefixes(q request, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(q.path, "/"+bkt+"/"+p+"/") {
			return true
		}
		if q.path == "/"+bkt {
			for _, kv := range strings.Split(q.query, "&") {
				if v, ok := strings.CutPrefix(kv, "prefix="); ok && strings.HasPrefix(v, p+"%2F") {
					return true
				}
			}
		}
	}
	return false
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	if v == nil {
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("not a list: %#v", v)
	}
	out := make([]string, len(l))
	for i, e := range l {
		s, ok := e.(string)
		if !ok {
			t.Fatalf("not a string: %#v", e)
		}
		out[i] = s
	}
	return out
}

func objs(t *testing.T, v any) []map[string]any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("not a list: %#v", v)
	}
	out := make([]map[string]any, len(l))
	for i, e := range l {
		m, ok := e.(map[string]any)
		if !ok {
			t.Fatalf("not an object: %#v", e)
		}
		out[i] = m
	}
	return out
}

func eq(t *testing.T, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: got %#v, want %#v", what, got, want)
	}
}

// abPaths is what find lists in ab's workdir: every file and every
// directory (the empty marker dir/ included), sorted.
func (f *fixture) abPaths(keep func(p string, dir bool) bool) []string {
	set := map[string]bool{"dir": true}
	for k := range f.ab {
		set[k] = false
		for d := filepath.Dir(k); d != "."; d = filepath.Dir(d) {
			set[d] = true
		}
	}
	var out []string
	for p, dir := range set {
		if keep == nil || keep(p, dir) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// TestS3CLITenancy: a tenant never reads, lists or learns of another
// tenant's keys (ab vs abc in one bucket, keys at the bucket's top),
// through s3:// input, '..', a shared prefix, cursors or errors; a
// tenant value that is no safe key component is config.
func TestS3CLITenancy(t *testing.T) {
	f := newFixture(t)
	cfg := f.policy(t, "", "")
	noSecret := func(t *testing.T, r result) {
		t.Helper()
		for _, s := range []string{"SECRET", "secret.txt", "abc/", "top.txt", "ab.txt", "ab-other"} {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("the answer names %q, another tenant's: %s", s, r)
			}
		}
	}
	onlyOwn := func(t *testing.T, mark int, prefixes ...string) {
		t.Helper()
		for _, q := range f.requestsSince(t, mark) {
			if !inPrefixes(q, prefixes...) {
				t.Errorf("a request outside %v: %s", prefixes, q)
			}
		}
	}

	t.Run("walks", func(t *testing.T) {
		for _, tc := range []struct {
			args  []string
			check func(t *testing.T, m map[string]any)
			exit  int
		}{
			{[]string{"ls"}, func(t *testing.T, m map[string]any) {
				var names []string
				for _, e := range objs(t, m["entries"]) {
					names = append(names, e["name"].(string))
				}
				eq(t, "ls names", names, []string{"big.txt", "dir", "docs", "lines.txt", "long.txt", "src", "t.csv", "x"})
			}, 0},
			{[]string{"ls", "s3://bkt/ab"}, func(t *testing.T, m map[string]any) { eq(t, "count", m["count"], 8.0) }, 0},
			{[]string{"find"}, func(t *testing.T, m map[string]any) { eq(t, "find", strs(t, m["paths"]), f.abPaths(nil)) }, 0},
			{[]string{"find", "--hidden", "--no-ignore", "-t", "f"}, func(t *testing.T, m map[string]any) {
				eq(t, "find -t f", strs(t, m["paths"]), f.abPaths(func(_ string, d bool) bool { return !d }))
			}, 0},
			{[]string{"grep", "-l", "needle"}, func(t *testing.T, m map[string]any) {
				eq(t, "grep -l needle", strs(t, m["paths"]), []string{"docs/readme.md"})
			}, 0},
			{[]string{"grep", "--hidden", "--no-ignore", "SECRE[T]"}, func(t *testing.T, m map[string]any) {
				eq(t, "grep SECRET count", m["count"], 0.0)
				eq(t, "files_searched", m["files_searched"], float64(len(f.ab)))
			}, 1},
			{[]string{"grep", "-c", "needle", "s3://bkt/shared"}, func(t *testing.T, m map[string]any) { eq(t, "count", m["count"], 0.0) }, 1},
		} {
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
				mark := f.mark(t)
				r := f.run(t, cfg, "ab", tc.args...)
				noSecret(t, r)
				tc.check(t, r.exit(t, tc.exit))
				onlyOwn(t, mark, "ab", "shared")
			})
		}
	})

	// A denied key: exit 3, and the error for one that exists and one
	// that does not are the same apart from the path (it never tells).
	t.Run("denied", func(t *testing.T) {
		for _, tc := range []struct{ args []string }{
			{[]string{"read", "s3://bkt/abc/x"}},
			{[]string{"read", "../abc/x"}},
			{[]string{"read", "s3://bkt/ab/../abc/x"}},
			{[]string{"read", "s3://bkt/top.txt"}},
			{[]string{"read", "s3://bkt/ab.txt"}},
			{[]string{"read", "../ab.txt"}},
			{[]string{"read", "s3://bkt/ab-other/z.txt"}},
			{[]string{"stat", "s3://bkt/abc/x"}},
			{[]string{"stat", "--sha256", "../abc/secret.txt"}},
			{[]string{"ls", "s3://bkt/abc"}},
			{[]string{"ls", "../abc"}},
			{[]string{"find", "s3://bkt/abc"}},
			{[]string{"grep", "needle", "s3://bkt/abc"}},
			{[]string{"grep", "needle", "s3://bkt/abc/secret.txt"}},
			{[]string{"wc", "s3://bkt/abc/x"}},
			{[]string{"slice", "../abc/x", "-1"}},
			{[]string{"cp", "s3://bkt/abc/x", "y"}},
		} {
			t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
				existing := tc.args[len(tc.args)-1]
				argi := len(tc.args) - 1
				if tc.args[0] == "slice" || tc.args[0] == "cp" {
					argi = 1
					existing = tc.args[1]
				}
				missing := existing + "-nothere"
				if strings.HasSuffix(existing, "/abc") {
					missing = strings.TrimSuffix(existing, "/abc") + "/abz"
				}
				args2 := append([]string(nil), tc.args...)
				args2[argi] = missing
				mark := f.mark(t)
				r1 := f.run(t, cfg, "ab", tc.args...)
				r2 := f.run(t, cfg, "ab", args2...)
				e1, e2 := r1.fail(t, 3, "denied"), r2.fail(t, 3, "denied")
				m1 := strings.ReplaceAll(e1.Message, existing, "PATH")
				m2 := strings.ReplaceAll(e2.Message, missing, "PATH")
				if m1 != m2 || e1.Rule != e2.Rule {
					t.Errorf("the errors tell an existing key from a missing one:\n%s\n%s", r1.stderr, r2.stderr)
				}
				noSecret(t, result{stderr: strings.ReplaceAll(r1.stderr, existing, "PATH")})
				for _, q := range f.requestsSince(t, mark) {
					if !inPrefixes(q, "ab") || strings.Contains(q.path, "abc") || strings.Contains(q.query, "abc") {
						t.Errorf("a denied call made the request %s", q)
					}
				}
			})
		}
	})

	// explain says denied without a request on the key.
	t.Run("explain", func(t *testing.T) {
		for _, p := range []string{"s3://bkt/abc/x", "../abc/x", "s3://bkt/top.txt"} {
			m := f.run(t, cfg, "ab", "explain", "read", p).ok(t)
			eq(t, "allowed", m["allowed"], false)
			eq(t, "rule", m["rule"], "root")
		}
	})

	// A cursor from tenant abc's walk, used by tenant ab, resumes nothing
	// and names nothing of abc's.
	t.Run("cursor", func(t *testing.T) {
		for _, args := range [][]string{
			{"find", "--limit", "1"},
			{"grep", "--limit", "1", "needle"},
			{"ls", "--limit", "1"},
		} {
			t.Run(args[0], func(t *testing.T) {
				m := f.run(t, cfg, "abc", args...).ok(t)
				cur, _ := m["next_cursor"].(string)
				if cur == "" {
					t.Fatalf("tenant abc's %v gave no cursor: %v", args, m)
				}
				mark := f.mark(t)
				r := f.run(t, cfg, "ab", append(args, "--cursor", cur)...)
				noSecret(t, r)
				r.fail(t, 2, "usage")
				onlyOwn(t, mark, "ab")
			})
		}
	})

	// A tenant value that is no safe key component is config (exit 8)
	// before any request; 255 bytes is a tenant.
	t.Run("values", func(t *testing.T) {
		for _, tc := range []struct {
			name   string
			tenant *string
			exit   int
		}{
			{"slash", ptr("a/b"), 8},
			{"dotdot", ptr(".."), 8},
			{"dot", ptr("."), 8},
			{"empty", ptr(""), 8},
			{"unset", nil, 8},
			{"backslash", ptr(`a\b`), 8},
			{"control", ptr("a\x01b"), 8},
			{"tab", ptr("a\tb"), 8},
			{"del", ptr("a\x7fb"), 8},
			{"256 bytes", ptr(strings.Repeat("a", 256)), 8},
			{"255 bytes", ptr(strings.Repeat("a", 255)), 0},
			{"a-b.c_d", ptr("a-b.c_d"), 0},
		} {
			t.Run(tc.name, func(t *testing.T) {
				mark := f.mark(t)
				r := f.runWith(t, "fsbox", f.env(cfg, tc.tenant), "", "ls")
				if tc.exit == 0 {
					m := r.ok(t)
					eq(t, "an unseeded tenant's ls", m["count"], 0.0)
					return
				}
				e := r.fail(t, 8, "config")
				if !strings.Contains(e.Message, "FSBOX_TENANT") {
					t.Errorf("the error does not name FSBOX_TENANT: %s", r)
				}
				if qs := f.requestsSince(t, mark); len(qs) != 0 {
					t.Errorf("a refused tenant made requests: %v", qs)
				}
			})
		}
	})
}

// TestS3CLIKeysRefused: keys SPEC refuses before any request are usage
// (exit 2): invalid UTF-8, a key over 1,024 bytes (the prefix counted),
// NUL.
func TestS3CLIKeysRefused(t *testing.T) {
	f := newFixture(t)
	cfg := f.policy(t, "", "")
	// "ab/" + rel: rel of 1021 bytes is a key of 1024, of 1022 one of
	// 1025.
	long := func(n int) string {
		seg := strings.Repeat("d", 200)
		p := strings.Join([]string{seg, seg, seg, seg, seg}, "/") + "/"
		return p + strings.Repeat("e", n-len(p))
	}
	for _, tc := range []struct {
		name  string
		args  []string
		stdin string
		exit  int
		code  string
		mark  string // no request may name it
	}{
		{"invalid utf-8", []string{"read", "bad\xffname"}, "", 2, "usage", "bad"},
		{"invalid utf-8 url", []string{"read", "s3://bkt/ab/bad\xff"}, "", 2, "usage", "bad"},
		{"invalid utf-8 dir", []string{"ls", "bad\xfe/"}, "", 2, "usage", "bad"},
		{"invalid utf-8 stat", []string{"stat", "x", "bad\xffname"}, "", 2, "usage", "bad"},
		{"invalid utf-8 grep", []string{"grep", "needle", "bad\xffname"}, "", 2, "usage", "bad"},
		{"key of 1025", []string{"read", long(1022)}, "", 2, "usage", "eeee"},
		{"key of 1025 stat", []string{"stat", long(1022)}, "", 2, "usage", "eeee"},
		{"key of 1025 stat parent", []string{"stat", "src/" + long(1018)}, "", 2, "usage", "eeee"},
		{"key of 1025 url", []string{"read", "s3://bkt/ab/" + long(1022)}, "", 2, "usage", "eeee"},
		{"key of 1025 grep", []string{"grep", "x", long(1022)}, "", 2, "usage", "eeee"},
		{"key of 1024 missing", []string{"read", long(1021)}, "", 4, "not_found", ""},
		{"key of 1024 missing stat", []string{"stat", "--sha256", long(1021)}, "", 0, "", ""},
		{"nul", []string{"stat", "--check-file", "-"}, "a\x00b=absent\n", 2, "usage", "a%00b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mark := f.mark(t)
			r := f.runWith(t, "fsbox", f.env(cfg, ptr("ab")), tc.stdin, tc.args...)
			if tc.exit == 0 {
				eq(t, "exists", r.ok(t)["exists"], false)
				return
			}
			r.fail(t, tc.exit, tc.code)
			if tc.mark == "" {
				return
			}
			for _, q := range f.requestsSince(t, mark) {
				if strings.Contains(q.path, tc.mark) || strings.Contains(q.query, tc.mark) {
					t.Errorf("a refused key reached the server: %s", q)
				}
			}
		})
	}
	// A key of exactly 1,024 bytes that exists reads, stats and greps.
	t.Run("key of 1024 exists", func(t *testing.T) {
		p := long(1021)
		f.s.Put(t, bkt, "ab/"+p, []byte("at the edge\n"))
		eq(t, "read", f.run(t, cfg, "ab", "read", p).ok(t)["content"], "at the edge\n")
		eq(t, "stat", f.run(t, cfg, "ab", "stat", p).ok(t)["size"], 12.0)
		eq(t, "grep", f.run(t, cfg, "ab", "grep", "-c", "edge", p).ok(t)["count"], 1.0)
	})
}

// TestS3CLIReadSide: every reading command on a bucket, with exact
// answers.
func TestS3CLIReadSide(t *testing.T) {
	f := newFixture(t)
	cfg := f.policy(t, "", "")
	noMode := func(t *testing.T, r result) {
		t.Helper()
		if strings.Contains(r.stdout, `"mode"`) || strings.Contains(r.stdout, `"target"`) {
			t.Errorf("mode or target on an object root: %s", r.stdout)
		}
	}
	goFiles := func(keep func(p int, file int) bool) []string {
		var out []string
		for p := range 4 {
			for fi := range 10 {
				if keep(p, fi) {
					out = append(out, fmt.Sprintf("src/pkg%d/file%d.go", p, fi))
				}
			}
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		args  []string
		exit  int
		check func(t *testing.T, m map[string]any, r result)
	}{
		{[]string{"read", "x"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "path", m["path"], "x")
			eq(t, "content", m["content"], "hello ab/x\n")
			eq(t, "size", m["size"], 11.0)
			eq(t, "sha256", m["sha256"], sha("hello ab/x\n"))
			eq(t, "eof", m["eof"], true)
			eq(t, "eol", m["eol"], "lf")
		}},
		{[]string{"read", "s3://bkt/ab/x"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "a workdir URL prints relative", m["path"], "x")
		}},
		{[]string{"read", "s3://bkt/shared/s.txt"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "path", m["path"], "s3://bkt/shared/s.txt")
			eq(t, "content", m["content"], "hello shared\n")
		}},
		{[]string{"read", "lines.txt", "--offset", "2", "--limit", "3"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "content", m["content"], "l3\nl4\nl5\n")
			eq(t, "offset", m["offset"], 2.0)
			eq(t, "lines", m["lines"], 3.0)
			eq(t, "next_offset", m["next_offset"], 5.0)
			eq(t, "eof", m["eof"], false)
			eq(t, "sha256 of the whole file", m["sha256"], sha(f.ab["lines.txt"]))
		}},
		{[]string{"read", "lines.txt", "--offset", "8"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "content", m["content"], "l9\nl10\n")
			eq(t, "eof", m["eof"], true)
		}},
		{[]string{"read", "--if-none-match", sha("hello ab/x\n"), "x"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "unchanged", m["unchanged"], true)
			if _, ok := m["content"]; ok {
				t.Errorf("content with unchanged: %v", m)
			}
		}},
		{[]string{"ls"}, 0, func(t *testing.T, m map[string]any, r result) {
			noMode(t, r)
			var got []string
			for _, e := range objs(t, m["entries"]) {
				got = append(got, e["name"].(string)+":"+e["type"].(string))
				_, size := e["size"]
				_, mtime := e["mtime"]
				if e["type"] == "dir" && (size || mtime) {
					t.Errorf("a directory with size or mtime: %v", e)
				}
				if e["type"] == "file" && (!size || !mtime) {
					t.Errorf("a file without size or mtime: %v", e)
				}
				if e["name"] == "x" {
					eq(t, "x's size", e["size"], 11.0)
					if mt, _ := e["mtime"].(string); !strings.HasSuffix(mt, "Z") || strings.Contains(mt, ".") {
						t.Errorf("mtime %q is not to the second in UTC", mt)
					}
				}
			}
			eq(t, "ls", got, []string{"big.txt:file", "dir:dir", "docs:dir", "lines.txt:file", "long.txt:file", "src:dir", "t.csv:file", "x:file"})
		}},
		{[]string{"ls", "dir"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "an empty directory's count", m["count"], 0.0)
		}},
		{[]string{"ls", "src"}, 0, func(t *testing.T, m map[string]any, _ result) {
			var got []string
			for _, e := range objs(t, m["entries"]) {
				got = append(got, e["name"].(string))
			}
			eq(t, "ls src", got, []string{"pkg0", "pkg1", "pkg2", "pkg3"})
		}},
		{[]string{"ls", "nope"}, 4, nil},
		{[]string{"stat", "x"}, 0, func(t *testing.T, m map[string]any, r result) {
			noMode(t, r)
			eq(t, "exists", m["exists"], true)
			eq(t, "type", m["type"], "file")
			eq(t, "size", m["size"], 11.0)
		}},
		{[]string{"stat", "x", "src", "nope", "dir", "src/pkg0/file3.go"}, 0, func(t *testing.T, m map[string]any, r result) {
			noMode(t, r)
			var got []string
			for _, e := range objs(t, m["files"]) {
				got = append(got, fmt.Sprintf("%v:%v:%v", e["path"], e["exists"], e["type"]))
			}
			eq(t, "stat", got, []string{"x:true:file", "src:true:dir", "nope:false:<nil>", "dir:true:dir", "src/pkg0/file3.go:true:file"})
		}},
		{[]string{"stat", "--sha256", "docs/readme.md"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "sha256", m["sha256"], sha(f.ab["docs/readme.md"]))
		}},
		{[]string{"stat", "--check", "x=" + sha("hello ab/x\n"), "lines.txt=" + strings.Repeat("0", 64), "nope=absent", "docs/readme.md=absent"}, 0,
			func(t *testing.T, m map[string]any, _ result) {
				eq(t, "unchanged", strs(t, m["unchanged"]), []string{"x", "nope"})
				var changed []string
				for _, e := range objs(t, m["changed"]) {
					changed = append(changed, fmt.Sprintf("%v:%v:%v", e["path"], e["exists"], e["sha256"]))
				}
				eq(t, "changed", changed, []string{"lines.txt:true:" + sha(f.ab["lines.txt"]), "docs/readme.md:true:" + sha(f.ab["docs/readme.md"])})
			}},
		{[]string{"grep", "-c", "func"}, 0, func(t *testing.T, m map[string]any, _ result) {
			var got []string
			for _, e := range objs(t, m["counts"]) {
				got = append(got, fmt.Sprintf("%v=%v", e["path"], e["count"]))
			}
			want := goFiles(func(int, int) bool { return true })
			for i := range want {
				want[i] += "=1"
			}
			eq(t, "grep -c", got, want)
			eq(t, "count", m["count"], 40.0)
		}},
		{[]string{"grep", "-l", "return 7 "}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "grep -l", strs(t, m["paths"]), goFiles(func(_ int, fi int) bool { return fi == 7 }))
		}},
		{[]string{"grep", "-n", "-C", "1", "^l5$", "lines.txt"}, 0, func(t *testing.T, m map[string]any, _ result) {
			ms := objs(t, m["matches"])
			if len(ms) != 1 {
				t.Fatalf("matches %v", ms)
			}
			eq(t, "line", ms[0]["line"], 5.0)
			eq(t, "text", ms[0]["text"], "l5")
			eq(t, "before", strs(t, ms[0]["before"]), []string{"l4"})
			eq(t, "after", strs(t, ms[0]["after"]), []string{"l6"})
		}},
		{[]string{"grep", "-i", "NEEDLE", "docs", "s3://bkt/shared"}, 0, func(t *testing.T, m map[string]any, _ result) {
			ms := objs(t, m["matches"])
			if len(ms) != 1 || ms[0]["path"] != "docs/readme.md" || ms[0]["line"] != 2.0 {
				t.Errorf("matches %v", ms)
			}
		}},
		{[]string{"grep", "hello", "s3://bkt/shared"}, 0, func(t *testing.T, m map[string]any, _ result) {
			ms := objs(t, m["matches"])
			if len(ms) != 1 || ms[0]["path"] != "s3://bkt/shared/s.txt" {
				t.Errorf("matches %v", ms)
			}
		}},
		{[]string{"grep", "no such text anywhere"}, 1, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "count", m["count"], 0.0)
			eq(t, "files_searched", m["files_searched"], float64(len(f.ab)))
		}},
		{[]string{"find", "**/*.go"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "find", strs(t, m["paths"]), goFiles(func(int, int) bool { return true }))
		}},
		{[]string{"find", ".", "file3.go"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "find", strs(t, m["paths"]), goFiles(func(_ int, fi int) bool { return fi == 3 }))
		}},
		{[]string{"find", "--type", "d"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "find -t d", strs(t, m["paths"]), []string{"dir", "docs", "src", "src/pkg0", "src/pkg1", "src/pkg2", "src/pkg3"})
		}},
		{[]string{"find", "src/pkg2", "--type", "f", "-E", "file[0-4].go"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "find", strs(t, m["paths"]), goFiles(func(p, fi int) bool { return p == 2 && fi > 4 }))
		}},
		{[]string{"find", "--max-depth", "1", "-l"}, 0, func(t *testing.T, m map[string]any, r result) {
			noMode(t, r)
			eq(t, "count", m["count"], 8.0)
		}},
		{[]string{"wc", "lines.txt", "x"}, 0, func(t *testing.T, m map[string]any, _ result) {
			fs := objs(t, m["files"])
			eq(t, "lines", []any{fs[0]["lines"], fs[1]["lines"]}, []any{10.0, 1.0})
			eq(t, "bytes", []any{fs[0]["bytes"], fs[1]["bytes"]}, []any{31.0, 11.0})
			eq(t, "words", fs[1]["words"], 2.0)
			total := m["total"].(map[string]any)
			eq(t, "total lines", total["lines"], 11.0)
		}},
		{[]string{"slice", "lines.txt", "-3"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "lines", strs(t, m["lines"]), []string{"l8", "l9", "l10"})
		}},
		{[]string{"slice", "lines.txt", "2", "4"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "lines", strs(t, m["lines"]), []string{"l3", "l4"})
		}},
		{[]string{"cut", "t.csv", "-d", ",", "-f", "2"}, 0, func(t *testing.T, m map[string]any, _ result) {
			b, _ := json.Marshal(m["rows"])
			eq(t, "rows", string(b), `[["2"],["10"],["1"]]`)
		}},
		{[]string{"sort", "t.csv", "-t", ",", "-k", "2", "-n"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "lines", strs(t, m["lines"]), []string{"c,1", "b,2", "a,10"})
		}},
		{[]string{"sort", "-r", "t.csv"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "lines", strs(t, m["lines"]), []string{"c,1", "b,2", "a,10"})
		}},
		{[]string{"explain", "read", "x"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "allowed", m["allowed"], true)
			eq(t, "root", m["root"], "s3://bkt/ab")
			eq(t, "resolved", m["resolved"], "s3://bkt/ab/x")
		}},
		{[]string{"roots"}, 0, func(t *testing.T, m map[string]any, _ result) {
			eq(t, "workdir", m["workdir"], "s3://bkt/ab")
			for _, r := range objs(t, m["roots"]) {
				eq(t, "kind", r["kind"], "s3")
				eq(t, "second_wall", r["second_wall"], "none")
			}
		}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := f.run(t, cfg, "ab", tc.args...)
			if tc.check == nil {
				if r.code != tc.exit {
					t.Fatalf("want exit %d: %s", tc.exit, r)
				}
				return
			}
			tc.check(t, r.exit(t, tc.exit), r)
		})
	}

	// slice -N reads only the end: ranged GETs (206), never the whole
	// object (big.txt is 300 KB).
	t.Run("slice reads the end", func(t *testing.T) {
		mark := f.mark(t)
		m := f.run(t, cfg, "ab", "slice", "big.txt", "-2").ok(t)
		eq(t, "lines", strs(t, m["lines"]), []string{"big line 19998", "big line 19999"})
		gets := 0
		for _, q := range f.requestsSince(t, mark) {
			if q.method == "GET" && q.path == "/bkt/ab/big.txt" {
				gets++
				if q.status != "206" {
					t.Errorf("slice -2 read the whole object: %s", q)
				}
			}
		}
		if gets == 0 {
			t.Errorf("slice -2 made no GET of big.txt")
		}
	})

	// A read too big for max_result_bytes is a page with a cursor; the
	// cursors give the whole file, one version.
	t.Run("read cursor", func(t *testing.T) {
		pcfg := f.policy(t, "[limits]\nmax_result_bytes = 700", "")
		var got strings.Builder
		args := []string{"read", "long.txt"}
		for i := 0; ; i++ {
			if i > 30 {
				t.Fatal("the cursors do not end")
			}
			r := f.run(t, pcfg, "ab", args...)
			if r.code != 0 && r.code != 9 {
				t.Fatalf("a page: %s", r)
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
				t.Fatal(r)
			}
			got.WriteString(m["content"].(string))
			eq(t, "sha256", m["sha256"], sha(f.ab["long.txt"]))
			if m["truncated"] != true {
				eq(t, "the last page's exit", r.code, 0)
				break
			}
			if i == 0 {
				eq(t, "the first page's exit", r.code, 9)
				eq(t, "limit", m["limit"], "max_result_bytes")
			}
			cur, _ := m["next_cursor"].(string)
			if cur == "" {
				t.Fatalf("a truncated page without a cursor: %s", r)
			}
			args = []string{"read", "long.txt", "--cursor", cur}
		}
		eq(t, "the pages", got.String(), f.ab["long.txt"])
	})

	// find's cursor resumes where --limit cut it, to the end.
	t.Run("find cursor", func(t *testing.T) {
		var all []string
		args := []string{"find", "--limit", "7"}
		for i := 0; ; i++ {
			if i > 20 {
				t.Fatal("the cursors do not end")
			}
			m := f.run(t, cfg, "ab", args...).ok(t)
			all = append(all, strs(t, m["paths"])...)
			cur, _ := m["next_cursor"].(string)
			if m["truncated"] != true || cur == "" {
				break
			}
			args = []string{"find", "--limit", "7", "--cursor", cur}
		}
		eq(t, "find by pages", all, f.abPaths(nil))
	})
}

// keysOf lists every key of the bucket with its ETag, through the SDK.
func keysOf(t *testing.T, s *s3test.Server) []string {
	t.Helper()
	var out []string
	p := s3.NewListObjectsV2Paginator(s.Client(), &s3.ListObjectsV2Input{Bucket: aws.String(bkt)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			out = append(out, aws.ToString(o.Key)+" "+aws.ToString(o.ETag))
		}
	}
	return out
}

// TestS3CLIMaxRequests: [store] max_requests cuts a walk or a search
// (exit 9, truncated, limit max_requests); a single-file command that
// reaches it fails with a stable code, never a panic or a hang.
func TestS3CLIMaxRequests(t *testing.T) {
	f := newFixture(t)
	cap5 := f.policy(t, "", "max_requests = 5")
	cap1 := f.policy(t, "", "max_requests = 1")
	t.Run("walks", func(t *testing.T) {
		for _, args := range [][]string{
			{"grep", "func"},
			{"grep", "-c", "func"},
			{"grep", "-l", "func", "src"},
			{"find"},
			{"find", "**/*.go"},
			{"wc", "src/pkg0/file0.go", "src/pkg0/file1.go", "src/pkg0/file2.go", "src/pkg0/file3.go", "src/pkg0/file4.go", "src/pkg0/file5.go"},
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				// find lists the tree flat: a request or two for these
				// 50 keys, so its cap is 1.
				cfg, max := cap5, 5
				if args[0] == "find" {
					cfg, max = cap1, 1
				}
				mark := f.mark(t)
				r := f.run(t, cfg, "ab", args...)
				// (An incomplete list once said truncated:false, exit 0,
				// its cut directories counted in skipped.errors.)
				if sk, _ := m0(r)["skipped"].(map[string]any); sk != nil && sk["errors"] != 0.0 {
					t.Errorf("a cut counted as errors: %s", r)
				}
				m := r.exit(t, 9)
				eq(t, "truncated", m["truncated"], true)
				eq(t, "limit", m["limit"], "max_requests")
				if n := len(f.requestsSince(t, mark)); n > max {
					t.Errorf("%d requests under max_requests = %d", n, max)
				}
			})
		}
	})

	// A command that cannot print a part: timeout (exit 9), the same
	// every time.
	for _, n := range []int{1, 2, 3} {
		cfg := f.policy(t, "", fmt.Sprintf("max_requests = %d", n))
		for _, args := range [][]string{{"read", "x"}, {"wc", "x"}, {"slice", "big.txt", "-1"}, {"stat", "x"}, {"ls"}, {"stat", "x", "src"}} {
			// One path: an answer or timeout; a list (ls, stat of
			// several paths): an answer or a cut.
			want := map[string]bool{"ok": true, "timeout/9": true}
			if args[0] == "ls" || len(args) > 2 && args[0] == "stat" {
				want = map[string]bool{"ok": true, "cut/9": true}
			}
			t.Run(fmt.Sprintf("%d %s", n, strings.Join(args, " ")), func(t *testing.T) {
				var seen []string
				for range 4 {
					mark := f.mark(t)
					r := f.run(t, cfg, "ab", args...)
					if q := f.requestsSince(t, mark); len(q) > n {
						t.Errorf("%d requests under max_requests = %d: %v", len(q), n, q)
					}
					if r.code == 0 {
						seen = append(seen, "ok")
						continue
					}
					if e, ok := r.errOf(); ok {
						seen = append(seen, fmt.Sprintf("%s/%d", e.Code, r.code))
						continue
					}
					var m map[string]any
					if json.Unmarshal([]byte(r.stdout), &m) == nil && m["limit"] == "max_requests" {
						seen = append(seen, fmt.Sprintf("cut/%d", r.code))
						continue
					}
					if m != nil && m["errors"] != nil {
						seen = append(seen, fmt.Sprintf("errors[]/%d", r.code))
						continue
					}
					t.Fatalf("neither an answer, a cut nor an error: %s", r)
				}
				for _, s := range seen[1:] {
					if s != seen[0] {
						t.Fatalf("%v under max_requests = %d answers differently from run to run: %v", args, n, seen)
					}
				}
				if want[seen[0]] {
					return
				}
				t.Errorf("%v under max_requests = %d ends %s (want one of %v): a single path that reaches the cap fails timeout (exit 9), a list is cut (truncated, limit max_requests, exit 9)", args, n, seen[0], want)
			})
		}
	}
}

// TestS3CLITLS: the store over HTTPS (https://localhost:PORT, the CA in
// SSL_CERT_FILE) works after Landlock; plain http:// off loopback is
// config before any request.
func TestS3CLITLS(t *testing.T) {
	f := newFixture(t, s3test.TLS())
	if !strings.HasPrefix(f.s.Endpoint(), "https://localhost:") {
		t.Fatalf("endpoint %s", f.s.Endpoint())
	}
	cfg := f.policy(t, "", "")
	m := f.run(t, cfg, "ab", "roots").ok(t)
	ll, _ := m["landlock"].(map[string]any)
	if ll["enforced"] != true {
		t.Logf("Landlock is not enforced on this kernel: %v", ll)
	}
	m = f.run(t, cfg, "ab", "grep", "-l", "needle").ok(t)
	eq(t, "grep over https", strs(t, m["paths"]), []string{"docs/readme.md"})
	m = f.run(t, cfg, "ab", "read", "x").ok(t)
	eq(t, "read over https", m["content"], "hello ab/x\n")
	m = f.run(t, cfg, "ab", "read", "s3://bkt/shared/s.txt").ok(t)
	eq(t, "read a read root over https", m["content"], "hello shared\n")

	// Without the CA the server is not trusted: io, naming the store.
	var env []string
	for _, kv := range f.env(cfg, ptr("ab")) {
		if !strings.HasPrefix(kv, "SSL_CERT_FILE=") {
			env = append(env, kv)
		}
	}
	env = append(env, "SSL_CERT_FILE="+filepath.Join(f.dir, "no-such-ca.pem"), "SSL_CERT_DIR="+f.dir)
	r := f.runWith(t, "fsbox", env, "", "read", "x")
	if r.code == 0 {
		t.Fatalf("a server signed by an unknown CA was trusted: %s", r)
	}
	e := r.fail(t, 7, "io")
	if !strings.Contains(e.Message, "s3://bkt/ab") {
		t.Errorf("the error does not name the store: %s", r)
	}

	for _, tc := range []struct {
		endpoint string
		exit     int
		code     string
	}{
		{"http://example.invalid:9000", 8, "config"},
		{"http://10.0.0.1:9000", 8, "config"},
		{"ftp://localhost:9000", 8, "config"},
	} {
		t.Run(tc.endpoint, func(t *testing.T) {
			r := f.run(t, f.policyAt(t, tc.endpoint, "", ""), "ab", "read", "x")
			e := r.fail(t, tc.exit, tc.code)
			if !strings.Contains(e.Message, "endpoint") {
				t.Errorf("the error does not name the endpoint: %s", r)
			}
		})
	}
}

// TestS3CLICredentials: no credentials is config naming the variables;
// refused credentials are io naming the store and a request id.
func TestS3CLICredentials(t *testing.T) {
	f := newFixture(t)
	cfg := f.policy(t, "", "")
	withCreds := func(id, secret string) []string {
		var env []string
		for _, kv := range f.env(cfg, ptr("ab")) {
			if !strings.HasPrefix(kv, "AWS_ACCESS_KEY_ID=") && !strings.HasPrefix(kv, "AWS_SECRET_ACCESS_KEY=") {
				env = append(env, kv)
			}
		}
		if id != "" {
			env = append(env, "AWS_ACCESS_KEY_ID="+id, "AWS_SECRET_ACCESS_KEY="+secret)
		}
		return env
	}
	t.Run("none", func(t *testing.T) {
		for _, args := range [][]string{{"read", "x"}, {"ls"}, {"grep", "needle"}} {
			mark := f.mark(t)
			r := f.runWith(t, "fsbox", withCreds("", ""), "", args...)
			e := r.fail(t, 8, "config")
			for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
				if !strings.Contains(e.Message, v) {
					t.Errorf("the error does not name %s: %s", v, r)
				}
			}
			if qs := f.requestsSince(t, mark); len(qs) != 0 {
				t.Errorf("requests without credentials: %v", qs)
			}
		}
	})
	var accessKey string
	for _, kv := range f.s.Env() {
		if v, ok := strings.CutPrefix(kv, "AWS_ACCESS_KEY_ID="); ok {
			accessKey = v
		}
	}
	for _, tc := range []struct {
		name, id string
		args     []string
	}{
		{"wrong secret read", accessKey, []string{"read", "x"}},
		{"wrong secret stat", accessKey, []string{"stat", "x"}},
		{"wrong secret ls", accessKey, []string{"ls"}},
		{"wrong secret find", accessKey, []string{"find"}},
		{"wrong secret grep", accessKey, []string{"grep", "needle"}},
		{"wrong secret grep file", accessKey, []string{"grep", "needle", "docs/readme.md"}},
		{"unknown key read", "AKNOBODY", []string{"read", "x"}},
		{"unknown key ls", "AKNOBODY", []string{"ls"}},
		{"unknown key grep", "AKNOBODY", []string{"grep", "needle"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := f.runWith(t, "fsbox", withCreds(tc.id, "wrong-secret"), "", tc.args...)
			e, ok := r.errOf()
			if !ok || e.Code != "io" || r.code != 7 {
				t.Fatalf("refused credentials are io (exit 7) naming the store and a request id; got %s", r)
			}
			if !strings.Contains(e.Message, "s3://bkt/ab") || !strings.Contains(e.Message, "request id") {
				t.Errorf("the error does not name the store and a request id: %s", r)
			}
		})
	}

	// A bucket that does not exist: io, whatever the command.
	t.Run("no bucket", func(t *testing.T) {
		nb := filepath.Join(f.dir, "nobucket.toml")
		b, _ := os.ReadFile(f.policy(t, "", ""))
		os.WriteFile(nb, bytes.ReplaceAll(b, []byte("s3://bkt/"), []byte("s3://nobkt/")), 0o644)
		for _, args := range [][]string{{"read", "x"}, {"ls"}, {"find"}, {"grep", "needle"}} {
			t.Run(args[0], func(t *testing.T) {
				r := f.run(t, nb, "ab", args...)
				if e, ok := r.errOf(); !ok || e.Code != "io" || r.code != 7 {
					t.Errorf("%v over a bucket that does not exist is io (exit 7, NoSuchBucket); got %s", args, r)
				}
			})
		}
	})
}

// TestS3CLIHandover: fsbox and fsbox-mcp (no AWS SDK) hand a policy with
// an s3:// root to the fsbox-s3 beside them.
func TestS3CLIHandover(t *testing.T) {
	f := newFixture(t)
	cfg := f.policy(t, "", "")
	env := f.env(cfg, ptr("ab"))

	t.Run("fsbox-s3 itself", func(t *testing.T) {
		m := f.runWith(t, "fsbox-s3", env, "", "read", "x").ok(t)
		eq(t, "content", m["content"], "hello ab/x\n")
	})

	// Without fsbox-s3 beside it, fsbox says so (config) and makes no
	// request.
	t.Run("fsbox alone", func(t *testing.T) {
		alone := testbin.Install(t, filepath.Join(f.dir, "alone"), "fsbox")
		mark := f.mark(t)
		r := runBin(t, filepath.Join(alone, "fsbox"), f.home, env, "", "read", "x")
		e := r.fail(t, 8, "config")
		if !strings.Contains(e.Message, "fsbox-s3") {
			t.Errorf("the error does not name fsbox-s3: %s", r)
		}
		if qs := f.requestsSince(t, mark); len(qs) != 0 {
			t.Errorf("requests: %v", qs)
		}
	})

	t.Run("fsbox-mcp", func(t *testing.T) {
		c := exec.Command(filepath.Join(f.bin, "fsbox-mcp"))
		c.Env, c.Dir = env, f.home
		var stderr bytes.Buffer
		c.Stderr = &stderr
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
		if err != nil {
			t.Fatalf("connect: %v\nstderr: %s", err, stderr.String())
		}
		defer cs.Close()
		call := func(name string, args map[string]any) (map[string]any, bool) {
			t.Helper()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
			if err != nil {
				t.Fatalf("%s %v: %v\nstderr: %s", name, args, err, stderr.String())
			}
			if len(res.Content) != 1 {
				t.Fatalf("%s: %d content blocks", name, len(res.Content))
			}
			tc, ok := res.Content[0].(*mcp.TextContent)
			if !ok {
				t.Fatalf("%s: not text: %#v", name, res.Content[0])
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(tc.Text), &m); err != nil {
				t.Fatalf("%s: %v: %s", name, err, tc.Text)
			}
			return m, res.IsError
		}
		m, isErr := call("fsbox_read", map[string]any{"path": "x"})
		if isErr || m["content"] != "hello ab/x\n" {
			t.Errorf("fsbox_read x: %v", m)
		}
		m, isErr = call("fsbox_grep", map[string]any{"pattern": "needle"})
		if isErr {
			t.Fatalf("fsbox_grep: %v", m)
		}
		ms := objs(t, m["matches"])
		if len(ms) != 1 || ms[0]["path"] != "docs/readme.md" {
			t.Errorf("fsbox_grep needle: %v", m)
		}
		for _, p := range []string{"s3://bkt/abc/x", "../abc/x", "s3://bkt/top.txt"} {
			m, isErr = call("fsbox_read", map[string]any{"path": p})
			e, _ := m["error"].(map[string]any)
			if !isErr || e["code"] != "denied" {
				t.Errorf("fsbox_read %s: %v", p, m)
			}
		}
		m, isErr = call("fsbox_read", map[string]any{"path": "a\x00b"})
		if e, _ := m["error"].(map[string]any); !isErr || e["code"] != "usage" {
			t.Errorf("fsbox_read of a key with NUL: %v", m)
		}
		// A change through the companion: the object written, the
		// journal in the bucket (TestS3CLIChanges has the rest).
		m, isErr = call("fsbox_write", map[string]any{"path": "new.txt", "content": "x"})
		if isErr || m["created"] != true || m["sha256"] != sha("x") {
			t.Errorf("fsbox_write: %v", m)
		}
		if got := getObject(t, f.s, "ab/new.txt"); got != "x" {
			t.Errorf("ab/new.txt after fsbox_write holds %q", got)
		}
	})
}
