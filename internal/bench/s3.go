//go:build unix

package main

// The s3-* rows (issue 43): fsbox on an object root, against what a user
// writes with the AWS SDK for Go v2 (rawops), on versitygw.
//
// The bench starts versitygw (FSBOX_VERSITYGW, else versitygw on PATH;
// without one the rows are reported as skipped) over DATA.s3, beside the
// data, and seeds the bucket "bench" through the SDK: s3://bench/t1/ holds
// file-4KiB.txt, ls100/ (100 objects) and grep1000/ (1,000 objects of 1
// to 4 KiB, every tenth with s3Needle on one line). fsbox runs under a
// policy whose workdir is s3://bench/t1 (its [store] the server's), with
// the server's keys in the environment of both sides
// (AWS_EC2_METADATA_DISABLED=true: s3test's Env).
//
// Whole-process rows, each fsbox against s3raw (internal/bench/s3raw,
// built by the bench unless -s3raw names it), direct and with -shell
// under sh -c with a pipe reader:
//
//	s3-stat        stat file-4KiB.txt         vs HeadObject
//	s3-read-4KiB   read it whole              vs GetObject
//	s3-ls-100      ls ls100                   vs ListObjectsV2 with delimiter '/'
//	s3-grep-1000   grep over grep1000         vs ListObjectsV2 then 1,000 GetObjects, 16 at a time
//	s3-edit        edit edit.txt, journaled   vs GET, CopyObject of the prior version to a
//	                                             journal key (source If-Match), PUT If-Match,
//	                                             the record PUT If-None-Match (issue 44)
//	s3-patch-3     patch of p/a.txt, p/b.txt, vs the same for 3 objects, with a plan PUT
//	               p/c.txt                       before the changes and DELETEd after
//
// The two changing rows put their objects back (untimed, through the SDK,
// with their sha256) before every run of either side; fsbox's journal is
// s3://bench/jn/t1, the rival's jn-raw/t1/.
//
// (fsbox execs fsbox-s3, the binary with the SDK: that exec is part of
// its cost) and the same four with fsbox-s3 called directly, NAME-direct.
// Targets: within 1.2x, grep 1.5x.
//
// MCP rows, per call: a session of `fsbox mcp` (which hands over to
// fsbox-s3 mcp) serving the s3 policy, warm, against a warm SDK client in
// the bench's own process doing the same requests (rawops), calls
// alternating one for one: s3-mcp-stat, s3-mcp-read-4KiB, s3-mcp-ls-100,
// s3-mcp-grep-1000; same targets. s3-mcp-floor, fsbox alone, is a stat
// of the root, which fsbox answers without a request: the MCP round trip
// and the server's own work, the floor of every per-call row.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fsbox/fsbox/internal/bench/s3raw/rawops"
	"github.com/fsbox/fsbox/internal/s3test"
)

const (
	s3Bucket   = "bench"
	s3Tenant   = "t1"
	s3File     = "file-4KiB.txt"
	s3LsDir    = "ls100"
	s3GrepDir  = "grep1000"
	s3Needle   = "S3_NEEDLE_[0-9]+"
	s3LsN      = 100
	s3GrepN    = 1000
	s3GrepCall = 40 // timed MCP grep calls (each does 1,001 requests)
	s3EditFile = "edit.txt"
	s3Old      = "counter: A"
	s3New      = "counter: B"
)

// s3PatchFiles are the 3-file patch row's objects (below the tenant).
var s3PatchFiles = []string{"p/a.txt", "p/b.txt", "p/c.txt"}

// s3ChangeBody is what the changing rows' objects hold before each run.
const s3ChangeBody = s3Old + "\n" + "the rest of the file stays as it is\n"

// s3CLIRows are the whole-process rows' names (each also NAME-direct).
var s3CLIRows = []string{"s3-stat", "s3-read-4KiB", "s3-ls-100", "s3-grep-1000", "s3-edit", "s3-patch-3"}

// s3MCPRows are the per-call MCP rows.
var s3MCPRows = []string{"s3-mcp-stat", "s3-mcp-read-4KiB", "s3-mcp-ls-100", "s3-mcp-grep-1000", "s3-mcp-floor"}

var s3Targets = map[string]float64{"stat": 1.2, "read-4KiB": 1.2, "ls-100": 1.2, "grep-1000": 1.5, "edit": 1.3, "patch-3": 1.3}

// s3Names is every s3 row's name.
func s3Names() []string {
	var ns []string
	for _, n := range s3CLIRows {
		ns = append(ns, n, n+"-direct")
	}
	return append(ns, s3MCPRows...)
}

// s3Wanted: does -only select any s3 row?
func s3Wanted(cfg config) bool {
	for _, n := range s3Names() {
		if cfg.only == nil || cfg.only.MatchString(n) {
			return true
		}
	}
	return false
}

// s3Env is the environment, policy and rival of the s3 rows.
type s3Env struct {
	srv    *s3test.Server
	stop   func()
	env    []string // the server's keys and region (s3test.Server.Env)
	policy policy
	raw    string // s3raw's path
}

// s3Setup starts and seeds the server and builds s3raw; skipped says why
// the rows cannot run ("" when they can).
func s3Setup(cfg config, dir string) (e *s3Env, skipped string, err error) {
	if abs, err := filepath.Abs(cfg.fsbox); err == nil {
		if _, err := os.Stat(filepath.Join(filepath.Dir(abs), "fsbox-s3")); err != nil {
			return nil, "no fsbox-s3 beside -fsbox (make build does not build it: go build -o DIR/fsbox-s3 ./cmd/fsbox-s3): s3 rows skipped", nil
		}
	}
	if s3test.Binary() == "" {
		return nil, "versitygw not found (FSBOX_VERSITYGW, or versitygw on PATH; make s3server builds one): s3 rows skipped", nil
	}
	raw := cfg.s3raw
	if raw == "" {
		raw = filepath.Join(dir+".s3raw", "s3raw")
		progress("building s3raw (internal/bench/s3raw) into %s", raw)
		cmd := exec.Command("go", "build", "-trimpath", "-o", raw, "github.com/fsbox/fsbox/internal/bench/s3raw")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, "", fmt.Errorf("building s3raw: %v: %s", err, out)
		}
	}
	if raw, err = filepath.Abs(raw); err != nil {
		return nil, "", err
	}
	sdir := dir + ".s3"
	if err := os.RemoveAll(sdir); err != nil {
		return nil, "", err
	}
	srv, stop, err := s3test.Launch(sdir)
	if err != nil {
		return nil, "", fmt.Errorf("versitygw: %v", err)
	}
	e = &s3Env{srv: srv, stop: stop, env: srv.Env(), raw: raw}
	e.policy = policy{name: "s3", text: fmt.Sprintf("workdir = \"s3://%s/%s\"\n\n[journal]\ndir = \"s3://%s/jn/%s\"\n\n[store]\nendpoint = %q\npath_style = true\nregion = %q\n",
		s3Bucket, s3Tenant, s3Bucket, s3Tenant, srv.Endpoint(), s3test.Region)}
	progress("versitygw on %s: seeding s3://%s/%s/ (1 + %d + %d objects)", srv.Endpoint(), s3Bucket, s3Tenant, s3LsN, s3GrepN)
	if err := s3Seed(srv.Client()); err != nil {
		stop()
		return nil, "", fmt.Errorf("seeding: %v", err)
	}
	return e, "", nil
}

// s3Seed puts the rows' objects, 16 at a time.
func s3Seed(c *s3.Client) error {
	ctx := context.Background()
	if _, err := c.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(s3Bucket)}); err != nil {
		return err
	}
	r := &rng{s: 43}
	text := func(size int, needle string) []byte {
		var b []byte
		for len(b) < size {
			line := []byte{}
			for len(line) < 60 {
				line = append(line, r.pick(words)...)
				line = append(line, ' ')
			}
			b = append(append(b, bytes.TrimSpace(line)...), '\n')
		}
		b = b[:size]
		if needle != "" {
			mid := bytes.IndexByte(b[size/2:], '\n') + size/2 + 1
			b = append(b[:mid:mid], append([]byte(needle+" found here\n"), b[mid:]...)...)
		}
		b[len(b)-1] = '\n'
		return b
	}
	objs := map[string][]byte{s3Tenant + "/" + s3File: text(4096, "")}
	for i := range s3LsN {
		objs[fmt.Sprintf("%s/%s/f%03d.txt", s3Tenant, s3LsDir, i)] = text(200+r.intn(800), "")
	}
	for i := range s3GrepN {
		needle := ""
		if i%10 == 3 {
			needle = fmt.Sprintf("S3_NEEDLE_%d", i)
		}
		objs[fmt.Sprintf("%s/%s/g%04d.txt", s3Tenant, s3GrepDir, i)] = text(1024+r.intn(3072), needle)
	}
	sem := make(chan struct{}, 16)
	errc := make(chan error, len(objs))
	for k, v := range objs {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s3Bucket), Key: aws.String(k),
				Body: bytes.NewReader(v), ContentLength: aws.Int64(int64(len(v)))})
			errc <- err
		}()
	}
	for range objs {
		if err := <-errc; err != nil {
			return err
		}
	}
	return nil
}

// s3Rows are the whole-process rows against the server of e.
func s3Rows(e *s3Env) []comparison {
	rawArgs := []string{e.raw, "-bucket", s3Bucket, "-endpoint", e.srv.Endpoint(), "-path-style"}
	p := s3Tenant + "/"
	rows := []struct {
		name  string
		fsbox []string
		raw   []string
	}{
		{"stat", []string{"stat", s3File}, []string{"stat", p + s3File}},
		{"read-4KiB", []string{"read", "--format", "text", s3File}, []string{"read", p + s3File}},
		{"ls-100", []string{"ls", s3LsDir}, []string{"ls", p + s3LsDir + "/"}},
		{"grep-1000", []string{"grep", "--format", "text", s3Needle, s3GrepDir}, []string{"grep", s3Needle, p + s3GrepDir + "/"}},
		{"edit", []string{"edit", s3EditFile, "--old", s3Old, "--new", s3New}, []string{"edit", p + s3EditFile, s3Old, s3New, "jn-raw/" + p}},
		{"patch-3", []string{"patch", "--patch", s3Patch()}, append([]string{"patch", s3Old, s3New, "jn-raw/" + p}, prefixed(p, s3PatchFiles)...)},
	}
	var cs []comparison
	for _, r := range rows {
		c := comparison{name: "s3-" + r.name, fsbox: r.fsbox, rival: append(append([]string{}, rawArgs...), r.raw...),
			env: e.env, policy: e.policy, maxRatio: s3Targets[r.name]}
		switch r.name {
		case "edit":
			c.setup = func(string) error { return s3Reset(e.srv.Client(), []string{p + s3EditFile}) }
		case "patch-3":
			c.setup = func(string) error { return s3Reset(e.srv.Client(), prefixed(p, s3PatchFiles)) }
		}
		d := c
		d.name, d.bin = c.name+"-direct", "fsbox-s3"
		cs = append(cs, c, d)
	}
	return cs
}

// benchS3MCP runs the selected s3-mcp-* rows: one session of fsbox mcp
// and one warm in-process SDK client, calls alternating.
func benchS3MCP(cfg config, dir, fsbox string, fsboxEnv []string, e *s3Env, rows []string) []result {
	var results []result
	fail := func(err error) []result {
		for _, n := range rows {
			results = append(results, result{Name: n, Error: err.Error()})
		}
		return results
	}
	for _, kv := range e.env {
		k, v, _ := strings.Cut(kv, "=")
		os.Setenv(k, v)
	}
	ctx := context.Background()
	raw, err := rawops.New(ctx, s3Bucket, e.srv.Endpoint(), true)
	if err != nil {
		return fail(fmt.Errorf("SDK client: %v", err))
	}
	env := append(append(append([]string{}, fsboxEnv...), e.env...), "FSBOX_CONFIG="+writePolicy(dir, e.policy))
	srv, err := startServer(fsbox, []string{fsbox, "mcp"}, dir, env, cfg.guard.timeout)
	if err != nil {
		return fail(err)
	}
	defer srv.close()
	if err := srv.initialize(); err != nil {
		return fail(err)
	}
	if err := srv.initialized(); err != nil {
		return fail(err)
	}
	re := regexp.MustCompile(s3Needle)
	p := s3Tenant + "/"
	type op struct {
		tool  string
		args  map[string]any
		raw   func(w io.Writer) error
		calls int
	}
	ops := map[string]op{
		"s3-mcp-stat": {"fsbox_stat", map[string]any{"path": s3File},
			func(w io.Writer) error { return raw.Stat(ctx, w, p+s3File) }, mcpCalls},
		"s3-mcp-read-4KiB": {"fsbox_read", map[string]any{"path": s3File},
			func(w io.Writer) error { return raw.Read(ctx, w, p+s3File) }, mcpCalls},
		"s3-mcp-ls-100": {"fsbox_ls", map[string]any{"path": s3LsDir},
			func(w io.Writer) error { return raw.Ls(ctx, w, p+s3LsDir+"/") }, mcpCalls},
		"s3-mcp-grep-1000": {"fsbox_grep", map[string]any{"pattern": s3Needle, "paths": []string{s3GrepDir}},
			func(w io.Writer) error {
				n, err := raw.Grep(ctx, w, re, p+s3GrepDir+"/")
				if err == nil && n != s3GrepN/10 {
					err = fmt.Errorf("grep found %d matching lines, not %d", n, s3GrepN/10)
				}
				return err
			}, s3GrepCall},
		"s3-mcp-floor": {"fsbox_stat", map[string]any{"path": "."}, nil, mcpCalls},
	}
	for _, name := range rows {
		o := ops[name]
		progress("== %s", name)
		res := result{Name: name, FsboxArgv: []string{"fsbox", "mcp", "(" + o.tool + ")"}, RivalArgv: []string{"rawops (a warm in-process SDK client)"},
			RatioTarget: s3Targets[strings.TrimPrefix(name, "s3-mcp-")]}
		if o.raw == nil {
			res.RivalArgv = nil
		}
		var fs, rs []sample
		var buf bytes.Buffer
		var rowErr error
		for i := range mcpWarmups + o.calls {
			for k := range 2 {
				t0 := time.Now()
				var err error
				if (i+k)%2 == 0 {
					err = srv.tool(o.tool, o.args)
				} else if o.raw == nil {
					continue
				} else {
					buf.Reset()
					err = o.raw(&buf)
				}
				d := time.Since(t0)
				if err != nil {
					rowErr = err
					break
				}
				if i < mcpWarmups {
					continue
				}
				if (i+k)%2 == 0 {
					fs = append(fs, sample{wall: d})
				} else {
					rs = append(rs, sample{wall: d})
				}
			}
			if rowErr != nil {
				break
			}
		}
		if rowErr != nil {
			res.Error = rowErr.Error()
			results = append(results, res)
			if errors.Is(rowErr, io.EOF) {
				return results
			}
			continue
		}
		res.Fsbox = summarizeCalls(fs)
		if o.raw == nil {
			res.Note = fmt.Sprintf("per call: %d calls after %d warm-ups; p90 %s; no request: the MCP round trip alone", o.calls, mcpWarmups, dur(res.Fsbox.P90Ms))
			results = append(results, res)
			continue
		}
		res.Rival = summarizeCalls(rs)
		res.Ratio = float64(int(res.Fsbox.MedianMs/res.Rival.MedianMs*1000+0.5)) / 1000
		pass := res.Ratio <= res.RatioTarget
		res.RatioPass = &pass
		res.Note = fmt.Sprintf("per call: %d calls each after %d warm-ups, alternating; p90 %s vs %s", o.calls, mcpWarmups, dur(res.Fsbox.P90Ms), dur(res.Rival.P90Ms))
		results = append(results, res)
	}
	return results
}

// s3MCPSelected is the s3-mcp-* rows -only selects.
func s3MCPSelected(cfg config) []string {
	var names []string
	for _, n := range s3MCPRows {
		if cfg.only == nil || cfg.only.MatchString(n) {
			names = append(names, n)
		}
	}
	return names
}

// s3Patch is the 3-file patch row's patch.
func s3Patch() string {
	var b strings.Builder
	b.WriteString("*** Begin Patch\n")
	for _, f := range s3PatchFiles {
		fmt.Fprintf(&b, "*** Update File: %s\n@@\n-%s\n+%s\n", f, s3Old, s3New)
	}
	b.WriteString("*** End Patch\n")
	return b.String()
}

func prefixed(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}

// s3Reset puts the changing rows' objects back as they were, each with
// its sha256 (as fsbox writes objects).
func s3Reset(c *s3.Client, keys []string) error {
	ctx := context.Background()
	body := []byte(s3ChangeBody)
	sum := sha256.Sum256(body)
	for _, k := range keys {
		if _, err := c.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(s3Bucket), Key: aws.String(k), Body: bytes.NewReader(body),
			ContentLength: aws.Int64(int64(len(body))), ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:]))}); err != nil {
			return err
		}
	}
	return nil
}
