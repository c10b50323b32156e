// Package s3store is the object store of fsbox's object roots on S3 (SPEC
// §4, Object roots): sandbox.ObjectStore over the AWS SDK for Go v2's S3
// client. Open is a sandbox.ObjectOpener; the binary that serves object
// roots (fsbox-s3) registers it, so the SDK is never linked into fsbox
// itself.
//
// Keys are sent verbatim: a request's key is the root's prefix, '/', and
// the key the door asked for, checked before any request (valid UTF-8, no
// NUL, no empty, "." or ".." component, at most 1,024 bytes). Answers are
// believed only inside the root: a listed key outside PREFIX/ is dropped.
package s3store

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// DefaultRegion is the region when none is configured anywhere (the
// policy's [store] region, AWS_REGION, the shared config's profile): S3
// needs one to sign, and a custom endpoint (a test server, most S3-
// compatible stores) accepts us-east-1.
const DefaultRegion = "us-east-1"

// MaxKeyBytes is the longest key S3 takes, the root's prefix included.
const MaxKeyBytes = 1024

// listPage is the most keys one ListObjectsV2 answers.
const listPage = 1000

// credsTimeout bounds Open's one retrieval of the credentials (a web
// identity exchange, an instance role).
const credsTimeout = 10 * time.Second

// Retries: the SDK's standard retryer (throttling, 5xx, broken
// connections), at most maxAttempts tries with backoffs of at most
// maxBackoff, so a request that keeps failing gives up within a few
// seconds of its tries.
const (
	maxAttempts = 3
	maxBackoff  = 2 * time.Second
)

// nameFiles are name resolution's files, read on a connection's first
// dial (after Landlock).
var nameFiles = []string{"/etc/hosts", "/etc/resolv.conf", "/etc/nsswitch.conf"}

// client is one S3 client, shared by every root opened with the same
// [store] settings, so they share one HTTP connection pool.
type client struct {
	s3    *s3.Client
	files []string
}

var (
	clientsMu sync.Mutex
	clients   = map[clientKey]*client{}
)

// clientKey is what makes a client: [store]'s connection settings (the
// rest of the AWS environment is the process's, the same for all).
type clientKey struct {
	endpoint, region, profile string
	pathStyle                 bool
}

// Open opens the object store of the root u under [store] cfg (a
// sandbox.ObjectOpener). It loads the AWS configuration and the system
// certificates, and retrieves the credentials once, so every file they
// come from is read now, before Landlock; Files names those the client
// must still read later.
func Open(ctx context.Context, cfg policy.Store, u policy.ObjectURL) (sandbox.ObjectStore, error) {
	k := clientKey{endpoint: cfg.Endpoint, region: cfg.Region, profile: cfg.Profile, pathStyle: cfg.PathStyle}
	clientsMu.Lock()
	defer clientsMu.Unlock()
	c := clients[k]
	if c == nil {
		var err error
		if c, err = newClient(ctx, cfg, u, options{}); err != nil {
			return nil, err
		}
		clients[k] = c
	}
	return newStore(c, u), nil
}

// options are what a test changes in a client.
type options struct {
	httpClient aws.HTTPClient // nil: a transport over the system pool
	retryer    func() aws.Retryer
}

func newClient(ctx context.Context, cfg policy.Store, u policy.ObjectURL, o options) (*client, error) {
	httpClient := o.httpClient
	if httpClient == nil {
		// The system pool now (SSL_CERT_FILE and SSL_CERT_DIR honoured),
		// not lazily at the first handshake, after Landlock; but not for
		// an http:// endpoint, which never makes one: parsing the
		// system's certificates (a bundle and a directory of ~150 each
		// on Debian) costs some 60 ms, most of such a call's start.
		var pool *x509.CertPool
		if !plainHTTP(cfg.Endpoint) {
			var err error
			if pool, err = x509.SystemCertPool(); err != nil {
				return nil, fserr.Errorf(fserr.CodeConfig, u.String(), "the system certificates could not be loaded: %v", err)
			}
		}
		httpClient = awshttp.NewBuildableClient().
			WithDialerOptions(func(d *net.Dialer) { d.Timeout = 10 * time.Second }).
			WithTransportOptions(func(t *http.Transport) {
				if t.TLSClientConfig == nil {
					t.TLSClientConfig = &tls.Config{MinVersion: tls.VersionTLS12}
				}
				if pool != nil {
					t.TLSClientConfig.RootCAs = pool
				}
				t.MaxIdleConnsPerHost = 64
				t.TLSHandshakeTimeout = 10 * time.Second
				t.ResponseHeaderTimeout = 60 * time.Second
			})
	}
	retryer := o.retryer
	if retryer == nil {
		retryer = func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = maxAttempts
				so.MaxBackoff = maxBackoff
			})
		}
	}
	opts := []func(*config.LoadOptions) error{
		config.WithHTTPClient(httpClient),
		config.WithRetryer(retryer),
		// Checksums only where fsbox sends them (PutObject's sha256) or
		// an operation needs one: no CRC trailers, no validation of
		// every GET.
		config.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		config.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if cfg.Profile != "" {
		opts = append(opts, config.WithSharedConfigProfile(cfg.Profile))
	}
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	acfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeConfig, u.String(), "the AWS configuration could not be loaded: %v", err)
	}
	if acfg.Region == "" {
		acfg.Region = DefaultRegion
	}
	if err := checkCredentials(ctx, acfg, u); err != nil {
		return nil, err
	}
	s3c := s3.NewFromConfig(acfg, func(so *s3.Options) {
		if cfg.Endpoint != "" {
			so.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		so.UsePathStyle = cfg.PathStyle
	})
	// The endpoint in force, wherever it came from ([store] endpoint,
	// AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the shared config): https://
	// except on loopback.
	if ep := s3c.Options().BaseEndpoint; ep != nil {
		if err := policy.CheckEndpoint(*ep); err != nil {
			return nil, fserr.Errorf(fserr.CodeConfig, u.String(), "%v", err)
		}
	}
	return &client{s3: s3c, files: afterFiles(acfg)}, nil
}

// plainHTTP reports whether endpoint is an http:// URL (no TLS).
func plainHTTP(endpoint string) bool {
	return len(endpoint) >= 7 && strings.EqualFold(endpoint[:7], "http://")
}

// noCredentials is what no credentials says: where they may come from.
const noCredentials = "no AWS credentials were found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, " +
	"or AWS_PROFILE (a profile of the shared AWS config), or AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN " +
	"(or run where an instance role is given); fsbox never takes them from the policy"

// checkCredentials retrieves the credentials once, with a short timeout
// (they are cached for the client's later requests): none is config,
// anonymous too.
func checkCredentials(ctx context.Context, acfg aws.Config, u policy.ObjectURL) error {
	if acfg.Credentials == nil {
		return fserr.Errorf(fserr.CodeConfig, u.String(), "%s", noCredentials)
	}
	cctx, cancel := context.WithTimeout(ctx, credsTimeout)
	defer cancel()
	creds, err := acfg.Credentials.Retrieve(cctx)
	if err != nil {
		return fserr.Errorf(fserr.CodeConfig, u.String(), "%s (%s)", noCredentials, firstLine(err.Error()))
	}
	if creds.AccessKeyID == "" || creds.Source == "AnonymousCredentials" {
		return fserr.Errorf(fserr.CodeConfig, u.String(), "%s", noCredentials)
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	const most = 300
	if len(s) > most {
		s = s[:most] + "..."
	}
	return s
}

// afterFiles are the files of the client's (SPEC §4: Landlock's read set
// gains exactly those, and the door denies them): the shared AWS config
// and credentials files and the system certificates, read in Open
// before Landlock (and by a credential refresh that reads them again); a
// web identity token (read again at each refresh); and name resolution's
// files.
func afterFiles(acfg aws.Config) []string {
	var out []string
	add := func(f string) {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	for _, f := range []struct{ env, def string }{
		{"AWS_CONFIG_FILE", config.DefaultSharedConfigFilename()},
		{"AWS_SHARED_CREDENTIALS_FILE", config.DefaultSharedCredentialsFilename()},
	} {
		if v := os.Getenv(f.env); v != "" {
			add(v)
		} else {
			add(f.def)
		}
	}
	// The SSO token cache (a directory of bearer tokens the SSO
	// provider reads and refreshes) and a container credentials token.
	if home, err := os.UserHomeDir(); err == nil {
		add(filepath.Join(home, ".aws", "sso", "cache"))
	}
	add(os.Getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"))
	add(os.Getenv("SSL_CERT_FILE"))
	for _, f := range certFiles {
		if _, err := os.Stat(f); err == nil { // the system's bundle, the client's own file, never a root's (before Landlock)
			add(f) // the one Go's certificate pool loads (the first there)
			break
		}
	}
	add(os.Getenv("AWS_WEB_IDENTITY_TOKEN_FILE"))
	for _, src := range acfg.ConfigSources {
		switch c := src.(type) {
		case config.EnvConfig:
			add(c.WebIdentityTokenFilePath)
		case config.SharedConfig:
			add(c.WebIdentityTokenFile)
		}
	}
	for _, f := range nameFiles {
		if _, err := os.Stat(f); err == nil { // name resolution's own files, fixed here, never a root's (before Landlock)
			add(f)
		}
	}
	return out
}

// certFiles are where the system's certificate bundle lies on Linux, in
// the order Go's crypto/x509 looks.
var certFiles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// store is one object root's view of a client: its bucket and prefix.
type store struct {
	c      *client
	bucket string
	prefix string // "" or "PREFIX/"
	url    string // s3://BUCKET/ for messages (a key follows)
}

func newStore(c *client, u policy.ObjectURL) *store {
	s := &store{c: c, bucket: u.Bucket, url: policy.S3Scheme + u.Bucket + "/"}
	if u.Prefix != "" {
		s.prefix = u.Prefix + "/"
	}
	return s
}

// Files are the files the client must still read after Landlock
// (sandbox.ObjectFiler).
func (s *store) Files() []string { return slices.Clone(s.c.files) }

// full is the key of rel in the bucket, refused (usage) when S3 would
// take it for another or not at all. A key may end in one '/' (a
// directory marker); a listing's prefix or start may be "" (the root).
func (s *store) full(rel string, emptyOK bool) (string, error) {
	return s.fullUpTo(rel, emptyOK, MaxKeyBytes)
}

// fullUpTo is full with a limit of its own on the key's length.
func (s *store) fullUpTo(rel string, emptyOK bool, maxBytes int) (string, error) {
	full := s.prefix + rel
	bad := func(why string) error {
		return fserr.Errorf(fserr.CodeUsage, rel, "the key %q is refused before any request: %s", rel, why)
	}
	if rel == "" {
		if emptyOK {
			return full, nil
		}
		return "", bad("it is empty")
	}
	switch {
	case !utf8.ValidString(full):
		return "", bad("it is not valid UTF-8")
	case strings.IndexByte(full, 0) >= 0:
		return "", bad("it holds a NUL byte")
	case len(full) > maxBytes:
		return "", bad(fmt.Sprintf("with the root's prefix it is %d bytes, over S3's %d", len(full), maxBytes))
	}
	for _, c := range strings.Split(strings.TrimSuffix(full, "/"), "/") {
		if c == "" || c == "." || c == ".." {
			return "", bad(`it has an empty, "." or ".." component`)
		}
	}
	return full, nil
}

// rel is full's key relative to the root, false when it lies outside
// the root (or is the root's own marker): such a key is not believed.
func (s *store) rel(full string) (string, bool) {
	if !strings.HasPrefix(full, s.prefix) || len(full) == len(s.prefix) {
		return "", false
	}
	return full[len(s.prefix):], true
}

// etag is an ETag as fsbox keeps it: quoted, as S3 sends it in every
// answer (a server that leaves the quotes off gets them added, so Head,
// List, Get and Put agree).
func etag(p *string) string {
	e := aws.ToString(p)
	if e == "" || strings.HasPrefix(e, `"`) || strings.HasPrefix(e, `W/"`) {
		return e
	}
	return `"` + e + `"`
}

func (s *store) Head(ctx context.Context, key string) (sandbox.Object, error) {
	full, err := s.full(key, false)
	if err != nil {
		return sandbox.Object{}, err
	}
	return s.head(ctx, key, full, "")
}

func (s *store) head(ctx context.Context, key, full, ifVersion string) (sandbox.Object, error) {
	in := &s3.HeadObjectInput{Bucket: &s.bucket, Key: &full, ChecksumMode: types.ChecksumModeEnabled}
	if ifVersion != "" {
		in.IfMatch = &ifVersion
	}
	out, err := s.c.s3.HeadObject(ctx, in)
	if err != nil {
		return sandbox.Object{}, s.mapErr(ctx, "head", key, full, ifVersion != "", err)
	}
	return sandbox.Object{Key: key, Size: aws.ToInt64(out.ContentLength), MTime: aws.ToTime(out.LastModified),
		Version: etag(out.ETag), SHA256: fullSHA256(out.ChecksumSHA256, out.ChecksumType)}, nil
}

// fullSHA256 is a HEAD's sha256 checksum as hex when it is of the whole
// object (a multipart upload's is a checksum of checksums, "...-N"), else
// "".
func fullSHA256(b64 *string, typ types.ChecksumType) string {
	if b64 == nil || typ == types.ChecksumTypeComposite || strings.Contains(*b64, "-") {
		return ""
	}
	sum, err := base64.StdEncoding.DecodeString(*b64)
	if err != nil || len(sum) != sha256.Size {
		return ""
	}
	return hex.EncodeToString(sum)
}

func (s *store) List(ctx context.Context, prefix, delim, after string, max int) ([]sandbox.Object, []string, error) {
	fullPrefix, err := s.fullUpTo(prefix, true, math.MaxInt)
	if err != nil {
		return nil, nil, err
	}
	if len(fullPrefix) > MaxKeyBytes {
		// No key is longer than S3's longest, so none starts with this
		// prefix: the answer is known without a request (the probe of
		// KEY/, a directory, after a HEAD of a key of 1,024 bytes).
		return nil, nil, nil
	}
	fullAfter := ""
	if after != "" {
		// after is where the last page ended: a key the store gave,
		// whatever its components spell ("d//x" is a key a listing may
		// hold and the door never names), so it is checked as bytes.
		fullAfter = s.prefix + after
		if !utf8.ValidString(fullAfter) || strings.IndexByte(fullAfter, 0) >= 0 || len(fullAfter) > MaxKeyBytes {
			return nil, nil, fserr.Errorf(fserr.CodeUsage, after, "a listing cannot continue after %q: not a key S3 takes", after)
		}
	}
	in := &s3.ListObjectsV2Input{Bucket: &s.bucket}
	if fullPrefix != "" {
		in.Prefix = &fullPrefix
	}
	if delim != "" {
		in.Delimiter = &delim
	}
	if fullAfter != "" {
		in.StartAfter = &fullAfter
	}
	var objs []sandbox.Object
	var prefixes []string
	lastPrefix := ""
	for {
		page := int32(listPage)
		if max > 0 {
			page = int32(min(max-len(objs)-len(prefixes), listPage))
		}
		in.MaxKeys = &page
		out, err := s.c.s3.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, nil, s.mapErr(ctx, "list", prefix, fullPrefix, false, err)
		}
		// The page's objects and prefixes in key order, as one listing:
		// only what lies below the prefix and after after is believed.
		type entry struct {
			key string
			ob  *types.Object
		}
		var ents []entry
		for i := range out.Contents {
			k := aws.ToString(out.Contents[i].Key)
			if strings.HasPrefix(k, fullPrefix) && k > fullAfter {
				ents = append(ents, entry{k, &out.Contents[i]})
			}
		}
		for _, cp := range out.CommonPrefixes {
			k := aws.ToString(cp.Prefix)
			if strings.HasPrefix(k, fullPrefix) && k > fullAfter {
				ents = append(ents, entry{k, nil})
			}
		}
		slices.SortStableFunc(ents, func(a, b entry) int { return strings.Compare(a.key, b.key) })
		for _, e := range ents {
			if max > 0 && len(objs)+len(prefixes) >= max {
				return objs, prefixes, nil
			}
			rel, ok := s.rel(e.key)
			if !ok {
				continue
			}
			if e.ob == nil {
				if e.key != lastPrefix { // a prefix once, as memObjects
					prefixes = append(prefixes, rel)
					lastPrefix = e.key
				}
				continue
			}
			objs = append(objs, sandbox.Object{Key: rel, Size: aws.ToInt64(e.ob.Size),
				MTime: aws.ToTime(e.ob.LastModified), Version: etag(e.ob.ETag)})
		}
		token := aws.ToString(out.NextContinuationToken)
		if !aws.ToBool(out.IsTruncated) || token == "" || (max > 0 && len(objs)+len(prefixes) >= max) ||
			token == aws.ToString(in.ContinuationToken) {
			return objs, prefixes, nil
		}
		in.ContinuationToken = &token
		in.StartAfter = nil
		// Every further page is a request of the call's, counted against
		// its cap ([store] max_requests) as the first was: an endpoint
		// that never ends a listing cannot run past it.
		if err := sandbox.TakeRequest(ctx); err != nil {
			return nil, nil, err
		}
	}
}

// readCloser is a body read through r and closed through c.
type readCloser struct {
	io.Reader
	io.Closer
}

func emptyBody() io.ReadCloser { return io.NopCloser(strings.NewReader("")) }

func (s *store) Get(ctx context.Context, key string, off, n int64, ifVersion string) (io.ReadCloser, sandbox.Object, error) {
	full, err := s.full(key, false)
	if err != nil {
		return nil, sandbox.Object{}, err
	}
	if n == 0 { // no range names 0 bytes: the facts alone
		ob, err := s.head(ctx, key, full, ifVersion)
		if err != nil {
			return nil, sandbox.Object{}, err
		}
		return emptyBody(), ob, nil
	}
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &full}
	if ifVersion != "" {
		in.IfMatch = &ifVersion
	}
	switch {
	case off < 0: // a suffix: the last -off bytes (n of them at most)
		in.Range = aws.String("bytes=" + strconv.FormatInt(off, 10))
	case n < 0 || off > (1<<63-1)-n: // to the end
		if off > 0 {
			in.Range = aws.String("bytes=" + strconv.FormatInt(off, 10) + "-")
		}
	default:
		in.Range = aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1))
	}
	out, err := s.c.s3.GetObject(ctx, in)
	if err != nil {
		if status(err) == http.StatusRequestedRangeNotSatisfiable {
			// From the end of the object on (or any range of an empty
			// one): nothing, as memObjects gives; the facts by HEAD.
			ob, herr := s.head(ctx, key, full, ifVersion)
			if herr != nil {
				return nil, sandbox.Object{}, herr
			}
			return emptyBody(), ob, nil
		}
		return nil, sandbox.Object{}, s.mapErr(ctx, "get", key, full, ifVersion != "", err)
	}
	ob := sandbox.Object{Key: key, Size: aws.ToInt64(out.ContentLength), MTime: aws.ToTime(out.LastModified),
		Version: etag(out.ETag)}
	var body io.Reader = out.Body
	if total, ok := contentRangeTotal(aws.ToString(out.ContentRange)); ok {
		ob.Size = total
	} else if in.Range != nil {
		// The server sent the whole object for a range: skip to off.
		start := off
		if off < 0 {
			start = max(0, ob.Size+off)
		}
		start = min(start, ob.Size)
		if _, err := io.CopyN(io.Discard, out.Body, start); err != nil {
			out.Body.Close()
			return nil, sandbox.Object{}, s.mapErr(ctx, "get", key, full, false, err)
		}
	}
	if n >= 0 {
		body = io.LimitReader(body, n)
	}
	return readCloser{body, out.Body}, ob, nil
}

// contentRangeTotal is the whole size a Content-Range names
// ("bytes 0-9/100": 100).
func contentRangeTotal(cr string) (int64, bool) {
	i := strings.LastIndexByte(cr, '/')
	if i < 0 {
		return 0, false
	}
	total, err := strconv.ParseInt(cr[i+1:], 10, 64)
	return total, err == nil && total >= 0
}

func (s *store) Put(ctx context.Context, key string, body io.ReadSeeker, size int64, sum [32]byte, c sandbox.ObjectCond) (sandbox.Object, error) {
	full, err := s.full(key, false)
	if err != nil {
		return sandbox.Object{}, err
	}
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &full, Body: body, ContentLength: &size,
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:]))}
	if c.IfAbsent {
		in.IfNoneMatch = aws.String("*")
	}
	if c.IfVersion != "" {
		in.IfMatch = &c.IfVersion
	}
	out, err := s.c.s3.PutObject(ctx, in)
	if err != nil {
		return sandbox.Object{}, s.mapErr(ctx, "put", key, full, c.IfAbsent || c.IfVersion != "", err)
	}
	// A PUT's answer has no Last-Modified: its Date is the store's clock
	// when it stored the object.
	mtime := time.Now()
	if raw, ok := awsmiddleware.GetRawResponse(out.ResultMetadata).(*smithyhttp.Response); ok {
		if t, err := http.ParseTime(raw.Header.Get("Date")); err == nil {
			mtime = t
		}
	}
	return sandbox.Object{Key: key, Size: size, MTime: mtime, Version: etag(out.ETag)}, nil
}

func (s *store) Delete(ctx context.Context, key, ifVersion string) error {
	full, err := s.full(key, false)
	if err != nil {
		return err
	}
	in := &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &full}
	if ifVersion != "" {
		in.IfMatch = &ifVersion
	}
	if _, err := s.c.s3.DeleteObject(ctx, in); err != nil {
		return s.mapErr(ctx, "delete", key, full, ifVersion != "", err)
	}
	return nil
}

// status is the HTTP status of a request's answer, 0 when none came.
func status(err error) int {
	var hs interface{ HTTPStatusCode() int }
	if errors.As(err, &hs) {
		return hs.HTTPStatusCode()
	}
	return 0
}

// mapErr maps a failed request to what the door expects: the call's
// context ending as itself (errors.Is holds), a missing key as
// fs.ErrNotExist, a refused condition as sandbox.ErrPrecondition, the
// rest as io naming the store and the request id.
func (s *store) mapErr(ctx context.Context, op, key, full string, conditional bool, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return &fs.PathError{Op: op, Path: key, Err: cerr}
	}
	code := ""
	var ae smithy.APIError
	if errors.As(err, &ae) {
		code = ae.ErrorCode()
	}
	st := status(err)
	noBucket := code == "NoSuchBucket" // the root's bucket is not there: no key is
	switch {
	case noBucket:
	case code == "ObjectParentIsFile" || code == "ExistingObjectIsDirectory":
		// A key below a file, or a file over a directory (a server over
		// a file system): as memObjects refuses them.
		return &fs.PathError{Op: op, Path: key, Err: fs.ErrExist}
	case st == http.StatusPreconditionFailed,
		conditional && (st == http.StatusConflict || st == http.StatusNotFound):
		return &fs.PathError{Op: op, Path: key, Err: sandbox.ErrPrecondition}
	case st == http.StatusNotFound && (code == "" || code == "NoSuchKey" || code == "NotFound"):
		// A missing key (a HEAD's answer has no body: NotFound). A 404
		// that names something else (versitygw's XAdminUserNotFound for
		// an unknown access key) is no answer about the key: io below.
		return &fs.PathError{Op: op, Path: key, Err: fs.ErrNotExist}
	}
	where := s.url + full
	rid := "no request id"
	var ri interface{ ServiceRequestID() string }
	if errors.As(err, &ri) && ri.ServiceRequestID() != "" {
		rid = "request id " + ri.ServiceRequestID()
	}
	var msg string
	switch {
	case code == "InvalidObjectState":
		msg = fmt.Sprintf("%s is archived (its storage class must be restored before it can be read) (%s)", where, rid)
	case st == http.StatusForbidden || st == http.StatusUnauthorized:
		msg = fmt.Sprintf("%s: %s refused: the credentials may not do this (HTTP %d %s) (%s)", where, op, st, code, rid)
	case st != 0:
		msg = fmt.Sprintf("%s: %s failed: HTTP %d %s (%s)", where, op, st, apiMessage(ae, err), rid)
	default:
		msg = fmt.Sprintf("%s: %s failed: %v (%s)", where, op, err, rid)
	}
	return &fserr.Error{Code: fserr.CodeIO, Path: key, Msg: msg, Err: err}
}

func apiMessage(ae smithy.APIError, err error) string {
	if ae != nil {
		if m := ae.ErrorMessage(); m != "" {
			return ae.ErrorCode() + ": " + m
		}
		return ae.ErrorCode()
	}
	return err.Error()
}
