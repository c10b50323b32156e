//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fsbox/fsbox/internal/s3test"
	"github.com/fsbox/fsbox/internal/scripttest"
)

// bucketScripts are the golden scripts of the read-side commands that run
// a second time with their workdir in a bucket (SPEC §4, Object roots):
// the same archive, commands and goldens, the workdir s3://BUCKET, whose
// objects are the script's work/ tree (versitygw serves the bucket from
// that directory: work/ is made a link to it, so what a script writes
// there with its own commands is in the bucket too). Scripts left out
// test what an object root does not have (symlinks, modes, hard links,
// special files, .gitignore, a local policy file, absolute paths in
// their goldens) or change files.
var bucketScripts = []string{
	"grep_basic", "grep_context", "grep_glob", "grep_truncated", "grep_binary",
	"read_basic", "read_paging", "read_encoding", "read_if_none_match", "read_text", "read_dashdash",
	"ls_truncated", "ls_empty_path",
	"stat_missing",
	"find_glob", "find_hidden", "find_errors", "find_size_age", "find_ls_limit",
	"wc_basic", "wc_agree",
	"slice_basic", "slice_text", "slice_errors", "slice_truncated",
	"cut_fields", "cut_csv", "cut_delimiter", "cut_errors", "cut_agree",
	"sort_basic", "sort_keys", "sort_crlf", "sort_errors",
}

// Read-side scripts left out, and why (each differs by design):
//
//	stat_check grep_nomatch  an empty directory (mkdir) is no object: on
//	                         a bucket only a DIR/ marker makes one
//	stat_dir stat_many read_escape find_filters grep_follow ls_symlink
//	ls_sorted                symlinks, and modes and directory sizes
//	                         matched by the script's own patterns
//	wc_errors ls_errors read_special
//	                         FIFOs and other special files
//	grep_longline            an object is read as a stream: a line past
//	                         16 MiB is given cut, as on a pipe
//	read_budget_page         a page is cut where its JSON, cursor
//	                         included, fills max_result_bytes; the
//	                         cursor names the root, so the cut moves
//	grep_cursor grep_flags explain_allowed
//	                         run a script through ../ from work/ (a link
//	                         here), or change files (mkdir, write)
//	ignore_* grep_ignore     .gitignore applies in a git repository only
//	stat_file                names the workdir by its local absolute path

// byDesign are the differences an object root has by design, applied to
// the goldens (want/) before a script runs on a bucket: nothing has a
// mode, and a directory (a prefix) has no size or mtime of its own.
var byDesign = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`,"mode":"0[0-7]{3}"`), ""},
	{regexp.MustCompile(`"mode":"0[0-7]{3}",`), ""},
	{regexp.MustCompile(`("type":"dir"),"size":\d+,"mtime":"[^"]*"`), "$1"},
	{regexp.MustCompile(`,\n\s*"mode": "0[0-7]{3}"`), ""},
	{regexp.MustCompile(`\n\s*"mode": "0[0-7]{3}",`), ""},
	{regexp.MustCompile(`(\t(?:file|dir)\t\d+\t)0[0-7]{3}\t`), "$1\t"}, // stat's text form
}

// TestS3Script runs bucketScripts with their workdir in a bucket on a real
// S3 server (versitygw), through this test binary as fsbox with the S3
// client (TestMain).
func TestS3Script(t *testing.T) {
	srv := s3test.Start(t)
	dir := filepath.Join("..", "..", "testdata", "script")
	p := scripttest.Params(dir, false)
	p.Dir = "" // only the files below
	for _, name := range bucketScripts {
		p.Files = append(p.Files, filepath.Join(dir, name+".txtar"))
	}
	local := p.Setup
	var n atomic.Int64
	p.Setup = func(env *testscript.Env) error {
		if err := local(env); err != nil {
			return err
		}
		// The workdir's bucket, and its journal's (a writable object
		// root keeps its journal in the store, outside every root).
		bucket := fmt.Sprintf("script-%d", n.Add(1))
		jbucket := bucket + "-j"
		for _, b := range []string{bucket, jbucket} {
			if _, err := srv.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: &b}); err != nil {
				return fmt.Errorf("create bucket %s: %v", b, err)
			}
		}
		work, served := filepath.Join(env.WorkDir, "work"), filepath.Join(srv.Dir(), bucket)
		ents, err := os.ReadDir(work)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		for _, e := range ents {
			if err := os.Rename(filepath.Join(work, e.Name()), filepath.Join(served, e.Name())); err != nil {
				return err
			}
		}
		if err := os.RemoveAll(work); err != nil {
			return err
		}
		if err := os.Symlink(served, work); err != nil {
			return err
		}
		// The bucket's policy is the user's config (the built-in
		// default's rules, the workdir in the bucket), so that a
		// script's --config still names its own policy, whose workdir
		// is moved to the bucket as well.
		st := srv.Store()
		store := fmt.Sprintf("\n[store]\nendpoint = %q\nregion = %q\npath_style = true\n", st.Endpoint, st.Region)
		url := "s3://" + bucket
		cfg := filepath.Join(env.WorkDir, "home", ".config", "fsbox", "config.toml")
		if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
			return err
		}
		jdir := fmt.Sprintf("dir = %q", "s3://"+jbucket)
		if err := os.WriteFile(cfg, []byte(fmt.Sprintf("workdir = %q\n", url)+store+"\n[journal]\n"+jdir+"\n"), 0o644); err != nil {
			return err
		}
		env.Vars = append(env.Vars, srv.Env()...)
		if err := rewrite(filepath.Join(env.WorkDir, "policy"), func(s string) string {
			if !strings.Contains(s, `"$WORK/work"`) {
				return s + store
			}
			s = strings.ReplaceAll(s, `"$WORK/work"`, strconv.Quote(url))
			return withJournal(s, jdir) + store
		}); err != nil {
			return err
		}
		return rewrite(filepath.Join(env.WorkDir, "want"), func(s string) string {
			for _, r := range byDesign {
				s = r.re.ReplaceAllString(s, r.with)
			}
			s = strings.ReplaceAll(s, "$REALWORK/work", url)
			return strings.ReplaceAll(s, "$WORK/work", url)
		})
	}
	// mtime sets the times of the objects: what work/ links to.
	mtime := p.Cmds["mtime"]
	p.Cmds["mtime"] = func(ts *testscript.TestScript, neg bool, args []string) {
		for i, a := range args {
			if real, err := filepath.EvalSymlinks(ts.MkAbs(a)); err == nil && i > 0 {
				args[i] = real
			}
		}
		mtime(ts, neg, args)
	}
	testscript.Run(t, p)
}

// withJournal sets the policy's [journal] dir to jdir (a line dir =
// "s3://..."): in its [journal] table when it has one (replacing a dir
// there), else in a table added at its end.
func withJournal(s, jdir string) string {
	loc := journalTable.FindStringIndex(s)
	if loc == nil {
		return s + "\n[journal]\n" + jdir + "\n"
	}
	head, body := s[:loc[1]], s[loc[1]:]
	end := len(body)
	if i := nextTable.FindStringIndex(body); i != nil {
		end = i[0]
	}
	table := journalDir.ReplaceAllString(body[:end], "")
	return head + jdir + "\n" + table + body[end:]
}

var (
	journalTable = regexp.MustCompile(`(?m)^\[journal\][ \t]*\n`)
	nextTable    = regexp.MustCompile(`(?m)^\[`)
	journalDir   = regexp.MustCompile(`(?m)^dir[ \t]*=.*\n`)
)

// rewrite replaces every file below dir with what edit makes of it.
func rewrite(dir string, edit func(string) string) error {
	return filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if s := edit(string(b)); s != string(b) {
			return os.WriteFile(p, []byte(s), 0o644)
		}
		return nil
	})
}
