package s3store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// The store without a server: a RoundTripper records each request and
// answers what the test says.

type answer struct {
	status int
	header map[string]string
	body   string
}

type recorder struct {
	mu     sync.Mutex
	reqs   []*http.Request
	bodies [][]byte
	answer func(r *http.Request) answer
}

func (rec *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	rec.mu.Lock()
	rec.reqs = append(rec.reqs, r)
	rec.bodies = append(rec.bodies, body)
	rec.mu.Unlock()
	a := answer{status: 200}
	if rec.answer != nil {
		a = rec.answer(r)
	}
	h := http.Header{}
	h.Set("x-amz-request-id", "REQ123")
	for k, v := range a.header {
		h.Set(k, v)
	}
	if a.body != "" && h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/xml")
	}
	return &http.Response{StatusCode: a.status, Status: fmt.Sprintf("%d %s", a.status, http.StatusText(a.status)),
		Header: h, Body: io.NopCloser(strings.NewReader(a.body)), ContentLength: int64(len(a.body)), Request: r}, nil
}

func (rec *recorder) count() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.reqs)
}

func (rec *recorder) last(t *testing.T) *http.Request {
	t.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.reqs) == 0 {
		t.Fatal("no request was made")
	}
	return rec.reqs[len(rec.reqs)-1]
}

// awsEnv makes the AWS environment the tests' alone: static keys, no
// shared files, no instance metadata.
func awsEnv(t *testing.T) {
	for _, v := range []string{"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL",
		"AWS_ENDPOINT_URL_S3", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_DEFAULT_REGION", "AWS_CA_BUNDLE"} {
		t.Setenv(v, "")
	}
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", "/dev/null")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/dev/null")
}

func newTestStore(t *testing.T, prefix string, answer func(r *http.Request) answer) (*store, *recorder) {
	t.Helper()
	awsEnv(t)
	rec := &recorder{answer: answer}
	u := policy.ObjectURL{Bucket: "bkt", Prefix: prefix}
	c, err := newClient(context.Background(), policy.Store{Endpoint: "http://127.0.0.1:9", PathStyle: true}, u, options{
		httpClient: &http.Client{Transport: rec},
		retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 2
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
			})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return newStore(c, u), rec
}

func code(err error) fserr.Code {
	var e *fserr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestBadKeysMakeNoRequest(t *testing.T) {
	s, rec := newTestStore(t, "ten", nil)
	ctx := context.Background()
	bad := []string{"\xff\xfe", "a/../b", "..", ".", "a//b", "a/./b", "/a", "", "a\x00b", strings.Repeat("k", 1025),
		strings.Repeat("k", MaxKeyBytes-len("ten/")+1), "a//"}
	for _, k := range bad {
		if _, err := s.Head(ctx, k); code(err) != fserr.CodeUsage {
			t.Errorf("Head(%q) = %v, want usage", k, err)
		}
		if _, _, err := s.Get(ctx, k, 0, -1, ""); code(err) != fserr.CodeUsage {
			t.Errorf("Get(%q) = %v, want usage", k, err)
		}
		if _, err := s.Put(ctx, k, strings.NewReader(""), 0, sha256.Sum256(nil), sandbox.ObjectCond{}); code(err) != fserr.CodeUsage {
			t.Errorf("Put(%q) = %v, want usage", k, err)
		}
		if err := s.Delete(ctx, k, ""); code(err) != fserr.CodeUsage {
			t.Errorf("Delete(%q) = %v, want usage", k, err)
		}
		if k == "" {
			continue // the root's listing
		}
		if len("ten/"+k) > MaxKeyBytes {
			// No key starts with a prefix longer than any key: an
			// empty listing, known without a request.
			if objs, prefixes, err := s.List(ctx, k, "/", "", 0); err != nil || len(objs)+len(prefixes) != 0 {
				t.Errorf("List(%q) = %v %v %v, want empty", k, objs, prefixes, err)
			}
		} else if _, _, err := s.List(ctx, k, "/", "", 0); code(err) != fserr.CodeUsage {
			t.Errorf("List(%q) = %v, want usage", k, err)
		}
		// after is where a listing's last page ended: a key the store
		// gave, whatever its components spell, so only what S3 cannot
		// take as a key (invalid UTF-8, NUL, too long) is refused.
		bytesBad := !utf8.ValidString(k) || strings.IndexByte(k, 0) >= 0 || len("ten/"+k) > MaxKeyBytes
		if _, _, err := s.List(ctx, "", "/", k, 0); bytesBad && code(err) != fserr.CodeUsage {
			t.Errorf("List after %q = %v, want usage", k, err)
		}
	}
	if n, want := rec.count(), 7; n != want { // the listings after the seven keys that are odd paths but keys
		t.Fatalf("%d requests were made for refused keys, want %d", n, want)
	}
	// The longest key that fits is sent.
	rec.answer = func(*http.Request) answer {
		return answer{status: 200, header: map[string]string{"Content-Length": "0"}}
	}
	if _, err := s.Head(ctx, strings.Repeat("k", MaxKeyBytes-len("ten/"))); err != nil {
		t.Fatal(err)
	}
}

// key is the object key a path-style request names.
func key(r *http.Request) string {
	p := r.URL.EscapedPath()
	p, _ = url.PathUnescape(p)
	return strings.TrimPrefix(p, "/bkt/")
}

func TestPrefixAlwaysWithSlash(t *testing.T) {
	s, rec := newTestStore(t, "ab", func(r *http.Request) answer {
		if r.URL.Query().Has("list-type") {
			return answer{status: 200, body: `<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>`}
		}
		return answer{status: 200, header: map[string]string{"Content-Length": "3", "ETag": `"e1"`}}
	})
	ctx := context.Background()
	if _, _, err := s.List(ctx, "", "/", "", 0); err != nil {
		t.Fatal(err)
	}
	if q := rec.last(t).URL.Query(); q.Get("prefix") != "ab/" || q.Get("delimiter") != "/" || q.Has("start-after") {
		t.Fatalf("list query %v, want prefix ab/", q)
	}
	if _, _, err := s.List(ctx, "dir/", "/", "dir/x", 5); err != nil {
		t.Fatal(err)
	}
	if q := rec.last(t).URL.Query(); q.Get("prefix") != "ab/dir/" || q.Get("start-after") != "ab/dir/x" || q.Get("max-keys") != "5" {
		t.Fatalf("list query %v", q)
	}
	ob, err := s.Head(ctx, "x y/ü+%")
	if err != nil {
		t.Fatal(err)
	}
	if k := key(rec.last(t)); k != "ab/x y/ü+%" {
		t.Fatalf("head key %q", k)
	}
	if ob.Key != "x y/ü+%" || ob.Size != 3 || ob.Version != `"e1"` {
		t.Fatalf("head %+v", ob)
	}
	// The whole bucket: no prefix.
	s2, rec2 := newTestStore(t, "", rec.answer)
	if _, _, err := s2.List(ctx, "", "/", "", 0); err != nil {
		t.Fatal(err)
	}
	if q := rec2.last(t).URL.Query(); q.Has("prefix") && q.Get("prefix") != "" {
		t.Fatalf("whole-bucket list query %v", q)
	}
}

func listXML(truncated bool, token string, keys []string, prefixes []string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`)
	fmt.Fprintf(&b, "<IsTruncated>%v</IsTruncated>", truncated)
	if token != "" {
		fmt.Fprintf(&b, "<NextContinuationToken>%s</NextContinuationToken>", token)
	}
	for _, k := range keys {
		fmt.Fprintf(&b, `<Contents><Key>%s</Key><LastModified>2025-01-02T03:04:05.000Z</LastModified><ETag>&quot;%s&quot;</ETag><Size>%d</Size></Contents>`,
			k, "etag-"+k, len(k))
	}
	for _, p := range prefixes {
		fmt.Fprintf(&b, "<CommonPrefixes><Prefix>%s</Prefix></CommonPrefixes>", p)
	}
	b.WriteString("</ListBucketResult>")
	return b.String()
}

func TestListDropsKeysOutsideThePrefix(t *testing.T) {
	s, _ := newTestStore(t, "ab", func(r *http.Request) answer {
		return answer{status: 200, body: listXML(false, "",
			[]string{"ab/", "ab/x", "abc/y", "other", "a", "ab/z/"}, []string{"abc/", "ab/d/", "zz/"})}
	})
	objs, prefixes, err := s.List(context.Background(), "", "/", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	if strings.Join(keys, ",") != "x,z/" || strings.Join(prefixes, ",") != "d/" {
		t.Fatalf("objects %q prefixes %q, want [x z/] [d/]", keys, prefixes)
	}
	if objs[0].Version != `"etag-ab/x"` || objs[0].Size != 4 || !objs[0].MTime.Equal(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("object %+v", objs[0])
	}
}

func TestListFollowsContinuation(t *testing.T) {
	var page int
	s, rec := newTestStore(t, "p", func(r *http.Request) answer {
		page++
		switch page {
		case 1:
			return answer{status: 200, body: listXML(true, "tok1", []string{"p/a", "p/b"}, []string{"p/c/"})}
		case 2:
			if r.URL.Query().Get("continuation-token") != "tok1" || r.URL.Query().Has("start-after") {
				return answer{status: 400, body: "<Error><Code>Bad</Code></Error>"}
			}
			return answer{status: 200, body: listXML(true, "tok2", []string{"p/d", "p/e"}, nil)}
		default:
			return answer{status: 200, body: listXML(false, "", []string{"p/f"}, []string{"p/g/"})}
		}
	})
	objs, prefixes, err := s.List(context.Background(), "", "/", "0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 5 || len(prefixes) != 2 || objs[4].Key != "f" || prefixes[1] != "g/" || rec.count() != 3 {
		t.Fatalf("objs %v prefixes %v after %d requests", objs, prefixes, rec.count())
	}
	if q := rec.reqs[0].URL.Query(); q.Get("start-after") != "p/0" || q.Get("max-keys") != "1000" {
		t.Fatalf("first query %v", q)
	}
	// max stops the listing, in key order across objects and prefixes.
	page = 0
	objs, prefixes, err = s.List(context.Background(), "", "/", "", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 2 || len(prefixes) != 1 || prefixes[0] != "c/" {
		t.Fatalf("max 3: objs %v prefixes %v", objs, prefixes)
	}
}

func TestRequestHeaders(t *testing.T) {
	data := []byte("hello world")
	s, rec := newTestStore(t, "t", func(r *http.Request) answer {
		switch r.Method {
		case http.MethodPut:
			return answer{status: 200, header: map[string]string{"ETag": `"new"`, "Date": "Wed, 01 Jan 2025 00:00:09 GMT"}}
		case http.MethodDelete:
			return answer{status: 204}
		}
		rng := r.Header.Get("Range")
		if rng == "" {
			return answer{status: 200, header: map[string]string{"ETag": `"v"`, "Content-Length": "11"}, body: string(data)}
		}
		var lo, hi int
		switch {
		case strings.HasPrefix(rng, "bytes=-"):
			fmt.Sscanf(rng, "bytes=-%d", &lo)
			lo, hi = len(data)-lo, len(data)-1
		case strings.HasSuffix(rng, "-"):
			fmt.Sscanf(rng, "bytes=%d-", &lo)
			hi = len(data) - 1
		default:
			fmt.Sscanf(rng, "bytes=%d-%d", &lo, &hi)
		}
		return answer{status: 206, header: map[string]string{"ETag": `"v"`, "Content-Range": fmt.Sprintf("bytes %d-%d/%d", lo, hi, len(data)),
			"Content-Length": fmt.Sprint(hi - lo + 1)}, body: string(data[lo : hi+1])}
	})
	ctx := context.Background()
	sum := sha256.Sum256(data)
	ob, err := s.Put(ctx, "f", bytes.NewReader(data), int64(len(data)), sum, sandbox.ObjectCond{IfAbsent: true})
	if err != nil {
		t.Fatal(err)
	}
	r := rec.last(t)
	if r.Header.Get("If-None-Match") != "*" || r.Header.Get("If-Match") != "" ||
		r.Header.Get("X-Amz-Checksum-Sha256") != base64.StdEncoding.EncodeToString(sum[:]) || key(r) != "t/f" {
		t.Fatalf("put headers %v", r.Header)
	}
	if string(rec.bodies[len(rec.bodies)-1]) != string(data) || r.ContentLength != int64(len(data)) {
		t.Fatalf("put body %q (%d)", rec.bodies[len(rec.bodies)-1], r.ContentLength)
	}
	if ob.Version != `"new"` || ob.Size != 11 || !ob.MTime.Equal(time.Date(2025, 1, 1, 0, 0, 9, 0, time.UTC)) {
		t.Fatalf("put answer %+v", ob)
	}
	if _, err := s.Put(ctx, "f", bytes.NewReader(data), int64(len(data)), sum, sandbox.ObjectCond{IfVersion: `"old"`}); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(t); r.Header.Get("If-Match") != `"old"` || r.Header.Get("If-None-Match") != "" {
		t.Fatalf("put if-match headers %v", r.Header)
	}
	if _, err := s.Put(ctx, "f", bytes.NewReader(data), int64(len(data)), sum, sandbox.ObjectCond{}); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(t); r.Header.Get("If-Match") != "" || r.Header.Get("If-None-Match") != "" {
		t.Fatalf("unconditional put headers %v", r.Header)
	}

	for _, c := range []struct {
		off, n    int64
		ver       string
		wantRange string
		want      string
	}{
		{0, -1, "", "", "hello world"},
		{0, 5, `"v"`, "bytes=0-4", "hello"},
		{6, -1, "", "bytes=6-", "world"},
		{6, 3, "", "bytes=6-8", "wor"},
		{-5, -1, "", "bytes=-5", "world"},
		{-5, 2, "", "bytes=-5", "wo"},
	} {
		body, ob, err := s.Get(ctx, "f", c.off, c.n, c.ver)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(body)
		body.Close()
		r := rec.last(t)
		if r.Header.Get("Range") != c.wantRange || r.Header.Get("If-Match") != c.ver || string(got) != c.want || ob.Size != 11 || ob.Version != `"v"` {
			t.Errorf("Get(%d, %d, %q): range %q if-match %q body %q size %d", c.off, c.n, c.ver,
				r.Header.Get("Range"), r.Header.Get("If-Match"), got, ob.Size)
		}
	}
	if err := s.Delete(ctx, "f", `"v"`); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(t); r.Method != http.MethodDelete || r.Header.Get("If-Match") != `"v"` || key(r) != "t/f" {
		t.Fatalf("delete %s headers %v", r.Method, r.Header)
	}
	if err := s.Delete(ctx, "f", ""); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(t); r.Header.Get("If-Match") != "" {
		t.Fatalf("unconditional delete headers %v", r.Header)
	}
}

func errXML(code string) string {
	return `<?xml version="1.0" encoding="UTF-8"?><Error><Code>` + code + `</Code><Message>msg</Message><RequestId>REQ123</RequestId></Error>`
}

func TestErrorMapping(t *testing.T) {
	ctx := context.Background()
	sum := sha256.Sum256(nil)
	type call func(s *store) error
	head := func(s *store) error { _, err := s.Head(ctx, "k"); return err }
	get := func(s *store) error { _, _, err := s.Get(ctx, "k", 0, -1, ""); return err }
	getIf := func(s *store) error { _, _, err := s.Get(ctx, "k", 0, -1, `"v"`); return err }
	put := func(s *store) error {
		_, err := s.Put(ctx, "k", strings.NewReader(""), 0, sum, sandbox.ObjectCond{})
		return err
	}
	putAbsent := func(s *store) error {
		_, err := s.Put(ctx, "k", strings.NewReader(""), 0, sum, sandbox.ObjectCond{IfAbsent: true})
		return err
	}
	putIf := func(s *store) error {
		_, err := s.Put(ctx, "k", strings.NewReader(""), 0, sum, sandbox.ObjectCond{IfVersion: `"v"`})
		return err
	}
	delIf := func(s *store) error { return s.Delete(ctx, "k", `"v"`) }
	list := func(s *store) error { _, _, err := s.List(ctx, "", "/", "", 0); return err }
	isNotExist := func(err error) bool { return errors.Is(err, fs.ErrNotExist) && code(err) == "" }
	isPre := func(err error) bool {
		return errors.Is(err, sandbox.ErrPrecondition) && !errors.Is(err, fs.ErrNotExist)
	}
	isIO := func(err error) bool {
		return code(err) == fserr.CodeIO && strings.Contains(err.Error(), "REQ123") && strings.Contains(err.Error(), "s3://bkt/")
	}
	for _, c := range []struct {
		name   string
		status int
		body   string
		call   call
		want   func(error) bool
	}{
		{"get 404", 404, errXML("NoSuchKey"), get, isNotExist},
		{"head 404", 404, "", head, isNotExist},
		{"get if-match 404", 404, errXML("NoSuchKey"), getIf, isPre},
		{"get 412", 412, errXML("PreconditionFailed"), getIf, isPre},
		{"head 403", 403, "", head, isIO},
		{"put-absent 412", 412, errXML("PreconditionFailed"), putAbsent, isPre},
		{"put-absent 409", 409, errXML("ConditionalRequestConflict"), putAbsent, isPre},
		{"put if-match 404", 404, errXML("NoSuchKey"), putIf, isPre},
		{"put if-match 409", 409, errXML("ConditionalRequestConflict"), putIf, isPre},
		{"put 409 unconditional", 409, errXML("OperationAborted"), put, isIO},
		{"put under a file", 409, errXML("ObjectParentIsFile"), put, func(err error) bool { return errors.Is(err, fs.ErrExist) }},
		{"delete if-match 412", 412, errXML("PreconditionFailed"), delIf, isPre},
		{"delete if-match 404", 404, errXML("NoSuchKey"), delIf, isPre},
		{"get 403", 403, errXML("AccessDenied"), get, isIO},
		{"list 403", 403, errXML("AccessDenied"), list, isIO},
		{"get 500", 500, errXML("InternalError"), get, isIO},
		{"put 503", 503, errXML("SlowDown"), put, isIO},
		{"list no bucket", 404, errXML("NoSuchBucket"), list, isIO},
		{"archived", 403, errXML("InvalidObjectState"), get, func(err error) bool {
			return isIO(err) && strings.Contains(err.Error(), "archived")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, rec := newTestStore(t, "t", func(*http.Request) answer { return answer{status: c.status, body: c.body} })
			err := c.call(s)
			if !c.want(err) {
				t.Fatalf("%d %s: got %v (%T)", c.status, c.body, err, err)
			}
			if n := rec.count(); c.status >= 500 && n != 2 || c.status < 500 && n != 1 {
				t.Fatalf("%d requests", n)
			}
		})
	}
}

func TestGetBeyondTheEnd(t *testing.T) {
	s, rec := newTestStore(t, "t", func(r *http.Request) answer {
		if r.Method == http.MethodHead {
			return answer{status: 200, header: map[string]string{"Content-Length": "4", "ETag": `"v"`}}
		}
		return answer{status: 416, header: map[string]string{"Content-Range": "bytes */4"}, body: errXML("InvalidRange")}
	})
	body, ob, err := s.Get(context.Background(), "k", 4, -1, `"v"`)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	if len(got) != 0 || ob.Size != 4 || ob.Version != `"v"` {
		t.Fatalf("body %q object %+v", got, ob)
	}
	if r := rec.last(t); r.Method != http.MethodHead || r.Header.Get("If-Match") != `"v"` {
		t.Fatalf("the facts came from %s %v", r.Method, r.Header)
	}
	// n = 0 names no range: a HEAD.
	if _, ob, err := s.Get(context.Background(), "k", 2, 0, ""); err != nil || ob.Size != 4 || rec.last(t).Method != http.MethodHead {
		t.Fatalf("n=0: %v %+v", err, ob)
	}
}

func TestContextErrorsComeBack(t *testing.T) {
	s, _ := newTestStore(t, "t", func(r *http.Request) answer {
		<-r.Context().Done()
		return answer{status: 500}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.Head(ctx, "k")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline", err)
	}
	if fserr.AsError(err).Code != fserr.CodeTimeout {
		t.Fatalf("code %s", fserr.AsError(err).Code)
	}
}

func TestNoCredentialsIsConfig(t *testing.T) {
	awsEnv(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	_, err := Open(context.Background(), policy.Store{Endpoint: "http://127.0.0.1:9"}, policy.ObjectURL{Bucket: "bkt", Prefix: "t"})
	if code(err) != fserr.CodeConfig || !strings.Contains(err.Error(), "AWS_ACCESS_KEY_ID") ||
		!strings.Contains(err.Error(), "AWS_PROFILE") || !strings.Contains(err.Error(), "AWS_WEB_IDENTITY_TOKEN_FILE") {
		t.Fatalf("got %v", err)
	}
}

func TestOpenSharesOneClient(t *testing.T) {
	awsEnv(t)
	cfg := policy.Store{Endpoint: "http://127.0.0.1:9", PathStyle: true, Region: "eu-west-3"}
	a, err := Open(context.Background(), cfg, policy.ObjectURL{Bucket: "bkt", Prefix: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(context.Background(), cfg, policy.ObjectURL{Bucket: "other", Prefix: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if a.(*store).c != b.(*store).c {
		t.Fatal("two roots of one [store] have two clients")
	}
	if r := a.(*store).c.s3.Options().Region; r != "eu-west-3" {
		t.Fatalf("region %q", r)
	}
	cfg.Region = ""
	t.Setenv("AWS_REGION", "")
	c, err := Open(context.Background(), cfg, policy.ObjectURL{Bucket: "bkt"})
	if err != nil {
		t.Fatal(err)
	}
	if c.(*store).c == a.(*store).c || c.(*store).c.s3.Options().Region != DefaultRegion {
		t.Fatalf("region %q", c.(*store).c.s3.Options().Region)
	}
	var _ sandbox.ObjectOpener = Open
	var _ sandbox.ObjectFiler = a.(*store)
}

func TestFiles(t *testing.T) {
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", "/run/token")
	t.Setenv("AWS_CONFIG_FILE", "/aws/config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/aws/credentials")
	t.Setenv("SSL_CERT_FILE", "/ca.pem")
	acfg := aws.Config{ConfigSources: []any{config.SharedConfig{WebIdentityTokenFile: "/profile/token"}}}
	files := afterFiles(acfg)
	home, _ := os.UserHomeDir()
	want := map[string]bool{"/run/token": true, "/profile/token": true, "/aws/config": true, "/aws/credentials": true, "/ca.pem": true,
		filepath.Join(home, ".aws", "sso", "cache"): true}
	for _, f := range certFiles {
		if fileExists(f) {
			want[f] = true
			break
		}
	}
	for _, f := range nameFiles {
		if fileExists(f) {
			want[f] = true
		}
	}
	if len(files) != len(want) {
		t.Fatalf("files %q, want %v", files, want)
	}
	for _, f := range files {
		if !want[f] {
			t.Fatalf("files %q, want %v", files, want)
		}
	}
}

func fileExists(f string) bool {
	_, err := os.Stat(f)
	return err == nil
}

// Without [store] endpoint the SDK's is used, AWS_ENDPOINT_URL_S3
// honoured.
func TestEndpointFromTheEnvironment(t *testing.T) {
	awsEnv(t)
	t.Setenv("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:9123")
	rec := &recorder{answer: func(*http.Request) answer {
		return answer{status: 200, header: map[string]string{"Content-Length": "0"}}
	}}
	u := policy.ObjectURL{Bucket: "bkt", Prefix: "t"}
	c, err := newClient(context.Background(), policy.Store{PathStyle: true}, u, options{httpClient: &http.Client{Transport: rec}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newStore(c, u).Head(context.Background(), "k"); err != nil {
		t.Fatal(err)
	}
	if r := rec.last(t); r.URL.Host != "127.0.0.1:9123" || r.URL.Path != "/bkt/t/k" {
		t.Fatalf("request to %s", r.URL)
	}
}

// A retried PUT sends the whole body again.
func TestPutRetrySendsTheBodyAgain(t *testing.T) {
	var n int
	s, rec := newTestStore(t, "t", func(*http.Request) answer {
		n++
		if n == 1 {
			return answer{status: 503, body: errXML("SlowDown")}
		}
		return answer{status: 200, header: map[string]string{"ETag": `"e"`}}
	})
	data := []byte("the body, twice")
	if _, err := s.Put(context.Background(), "k", bytes.NewReader(data), int64(len(data)), sha256.Sum256(data), sandbox.ObjectCond{}); err != nil {
		t.Fatal(err)
	}
	if rec.count() != 2 || string(rec.bodies[0]) != string(data) || string(rec.bodies[1]) != string(data) {
		t.Fatalf("%d requests, bodies %q", rec.count(), rec.bodies)
	}
}

// TestEndpointFromEnvironment: an endpoint from the environment is held
// to the policy's rule: https:// except on loopback (config).
func TestEndpointFromEnvironment(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "k")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "s")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", os.DevNull)
	t.Setenv("AWS_CA_BUNDLE", "")
	for _, c := range []struct {
		ep string
		ok bool
	}{{"http://s3.example.invalid:9000", false}, {"http://127.0.0.1:9000", true}, {"https://s3.example.invalid", true}} {
		t.Setenv("AWS_ENDPOINT_URL_S3", c.ep)
		_, err := Open(context.Background(), policy.Store{Region: "us-east-1", Concurrency: 1}, policy.ObjectURL{Bucket: "bkt-" + strconv.Itoa(len(c.ep))})
		if got := err == nil; got != c.ok {
			t.Errorf("AWS_ENDPOINT_URL_S3=%s: %v, want ok %v", c.ep, err, c.ok)
		}
		if err != nil {
			if e := fserr.AsError(err); e == nil || e.Code != fserr.CodeConfig {
				t.Errorf("AWS_ENDPOINT_URL_S3=%s: %v, want config", c.ep, err)
			}
		}
	}
}

// TestEndlessListingCapped: an endpoint that never ends a listing (always
// truncated, a new token each page, nothing under the prefix) cannot run
// a call past its request cap: every page is a request of the call's.
func TestEndlessListingCapped(t *testing.T) {
	n := 0
	s, rec := newTestStore(t, "ten", func(*http.Request) answer {
		n++
		return answer{status: 200, body: fmt.Sprintf(`<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>tok%d</NextContinuationToken><Contents><Key>other/k%d</Key></Contents></ListBucketResult>`, n, n)}
	})
	ctx := sandbox.WithRequestCap(context.Background(), 5)
	// The first request is counted by the door (its counted store); here
	// the store is called directly, so it is taken by hand.
	if err := sandbox.TakeRequest(ctx); err != nil {
		t.Fatal(err)
	}
	_, _, err := s.List(ctx, "", "/", "", 0)
	if !errors.Is(err, sandbox.ErrMaxRequests) {
		t.Fatalf("an endless listing under a cap of 5: %v", err)
	}
	if got := rec.count(); got > 5 {
		t.Fatalf("%d requests under a cap of 5", got)
	}
}

// TestEscapeKey: a copy's source key is sent %-encoded, each '/' kept,
// '+' as %2B (a server reads a bare '+' as a space) and a space as %20.
func TestEscapeKey(t *testing.T) {
	for in, want := range map[string]string{
		"a+b.txt":       "a%2Bb.txt",
		"d/a b.txt":     "d/a%20b.txt",
		"d/é%?#&=.txt":  "d/%C3%A9%25%3F%23%26%3D.txt",
		"plain/key.txt": "plain/key.txt",
	} {
		if got := escapeKey(in); got != want {
			t.Errorf("escapeKey(%q) = %q, want %q", in, got, want)
		}
	}
}
