package policy

import (
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Object roots (SPEC §4, Object roots): a root written s3://BUCKET/PREFIX
// is a bucket prefix, reached through [store]. Credentials never come
// from the policy: only from the AWS environment (variables, profile,
// web identity, instance role).

// S3Scheme starts every object root's URL: an argument or a root that
// starts with it is always a URL, never a local path.
const S3Scheme = "s3://"

// Store holds [store]: how fsbox reaches the object store its s3:// roots
// name. Used only when a root is an s3:// URL.
type Store struct {
	// Endpoint is the S3 endpoint; "" is the SDK's (AWS_ENDPOINT_URL_S3
	// honoured). It must be https:// except on loopback.
	Endpoint string `toml:"endpoint" json:"endpoint"`
	Region   string `toml:"region" json:"region"`
	// PathStyle addresses buckets as ENDPOINT/BUCKET (servers without
	// virtual-host buckets).
	PathStyle bool `toml:"path_style" json:"path_style"`
	// Profile is a profile name from the shared AWS config.
	Profile string `toml:"profile" json:"profile"`
	// Concurrency is the number of requests in flight for walks and
	// reads (default 16).
	Concurrency int `toml:"concurrency" json:"concurrency"`
	// MaxRequests caps the requests of one call; 0 is no cap (the agent
	// preset: 10,000). A call that reaches it is cut (limit
	// "max_requests").
	MaxRequests int64 `toml:"max_requests" json:"max_requests"`
}

// DefaultStoreConcurrency is [store] concurrency when the policy leaves
// it out.
const DefaultStoreConcurrency = 16

// AgentMaxRequests is [store] max_requests under the agent preset.
const AgentMaxRequests = 10000

// maxKeyComponent is the longest a tenant value (a ${VAR} in an object
// root) may be, in bytes.
const maxKeyComponent = 255

// IsObjectURL reports whether s names an object root (s3://...).
func IsObjectURL(s string) bool { return strings.HasPrefix(s, S3Scheme) }

// ObjectURL is an object root's location.
type ObjectURL struct {
	Bucket string
	Prefix string // "" (the whole bucket) or a cleaned key prefix without '/' at either end
}

// String is the URL in its canonical form: s3://BUCKET or
// s3://BUCKET/PREFIX.
func (u ObjectURL) String() string {
	if u.Prefix == "" {
		return S3Scheme + u.Bucket
	}
	return S3Scheme + u.Bucket + "/" + u.Prefix
}

// ParseObjectURL parses s3://BUCKET[/PREFIX]. The prefix's components
// must be keys SPEC allows (no empty, "." or ".." component, valid
// UTF-8, no NUL or control character); a trailing '/' is dropped.
func ParseObjectURL(s string) (ObjectURL, error) {
	if !IsObjectURL(s) {
		return ObjectURL{}, fmt.Errorf("%q is not an s3:// URL", s)
	}
	rest := strings.TrimSuffix(s[len(S3Scheme):], "/")
	bucket, prefix, _ := strings.Cut(rest, "/")
	if !validBucket(bucket) {
		return ObjectURL{}, fmt.Errorf("%q: %q is not a bucket name (3-63 lower-case letters, digits, '.' and '-')", s, bucket)
	}
	if prefix != "" {
		for _, c := range strings.Split(prefix, "/") {
			if err := keyComponent(c); err != nil {
				return ObjectURL{}, fmt.Errorf("%q: the prefix %v", s, err)
			}
		}
	}
	if len(prefix) > 1024-2 {
		return ObjectURL{}, fmt.Errorf("%q: the prefix is longer than a key may be", s)
	}
	return ObjectURL{Bucket: bucket, Prefix: prefix}, nil
}

// validBucket is S3's bucket naming rule, loosely: what a URL may name.
func validBucket(b string) bool {
	if len(b) < 3 || len(b) > 63 {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return b[0] != '.' && b[0] != '-' && b[len(b)-1] != '.' && b[len(b)-1] != '-'
}

// keyComponent checks one '/'-separated component of a key (or a tenant
// value that becomes one): not empty, not "." or "..", valid UTF-8, no
// '\', NUL or control character, at most 255 bytes.
func keyComponent(c string) error {
	switch {
	case c == "":
		return fmt.Errorf("has an empty component")
	case c == "." || c == "..":
		return fmt.Errorf("has a %q component", c)
	case len(c) > maxKeyComponent:
		return fmt.Errorf("has a component longer than %d bytes", maxKeyComponent)
	case !utf8.ValidString(c):
		return fmt.Errorf("is not valid UTF-8")
	case strings.ContainsRune(c, '\\'):
		return fmt.Errorf("holds a '\\'")
	}
	for _, r := range c {
		if unicode.IsControl(r) {
			return fmt.Errorf("holds a control character")
		}
	}
	return nil
}

// TenantValue checks a value a ${VAR} puts into an object root's URL: a
// safe key component, no '/' (SPEC §4: else config).
func TenantValue(name, v string) error {
	if strings.Contains(v, "/") {
		return fmt.Errorf("environment variable %s holds %q: a tenant value in an s3:// root may not hold '/'", name, v)
	}
	if err := keyComponent(v); err != nil {
		return fmt.Errorf("environment variable %s holds %q, which is not a safe key component: it %v", name, v, err)
	}
	return nil
}

// HasObjectRoot reports whether any of p's roots is an object root.
func (p *Policy) HasObjectRoot() bool {
	for _, r := range p.AllRoots() {
		if IsObjectURL(r) {
			return true
		}
	}
	return false
}

// AllRoots are the workdir, the write roots and the read roots, as
// configured.
func (p *Policy) AllRoots() []string {
	out := append([]string{p.Workdir}, p.WriteRoots...)
	return append(out, p.ReadRoots...)
}

// checkStore validates [store] where a root is an object root.
func (p *Policy) checkStore() error {
	if p.Store.Concurrency < 1 || p.Store.Concurrency > 1024 {
		return fmt.Errorf("[store] concurrency must be between 1 and 1024, got %d", p.Store.Concurrency)
	}
	if p.Store.MaxRequests < 0 {
		return fmt.Errorf("[store] max_requests must be 0 (no cap) or a positive number, got %d", p.Store.MaxRequests)
	}
	if p.Store.Endpoint != "" {
		if err := CheckEndpoint(p.Store.Endpoint); err != nil {
			return err
		}
	}
	var urls []ObjectURL
	for _, r := range p.AllRoots() {
		if IsObjectURL(r) {
			u, err := ParseObjectURL(r)
			if err != nil {
				return fmt.Errorf("root %v", err)
			}
			urls = append(urls, u)
		}
	}
	return p.checkObjectJournal(urls)
}

// MaxObjectBytes is the largest object one PUT makes (S3's limit): fsbox
// writes each object with one request, never in parts.
const MaxObjectBytes = 5 << 30

// WritableObjectRoots are the writable roots that are object roots.
func (p *Policy) WritableObjectRoots() []string {
	var out []string
	for _, r := range append([]string{p.Workdir}, p.WriteRoots...) {
		if IsObjectURL(r) {
			out = append(out, r)
		}
	}
	return out
}

// checkObjectJournal: a writable object root needs the journal in the
// store (an s3:// [journal] dir, outside every object root: neither in
// one nor holding one), and writes no object larger than one PUT takes.
// A journal dir in the store with no writable object root is refused
// too: it would hold nothing.
func (p *Policy) checkObjectJournal(roots []ObjectURL) error {
	w := p.WritableObjectRoots()
	if len(w) > 0 && p.Limits.MaxWriteBytes > MaxObjectBytes {
		return fmt.Errorf("[limits] max_write_bytes = %d is over 5 GiB, the largest object one PUT writes, and %s is a writable object root (fsbox writes each object whole, never in parts)", p.Limits.MaxWriteBytes, w[0])
	}
	if !IsObjectURL(p.Journal.Dir) {
		if len(w) > 0 && p.Journal.Enabled {
			return fmt.Errorf("%s is a writable object root, and its journal must be in the store: set [journal] dir to an s3:// URL outside every root (naming the roots' ${VAR}s, one journal per tenant), or [journal] enabled = false", w[0])
		}
		return nil
	}
	j, err := ParseObjectURL(p.Journal.Dir)
	if err != nil {
		return fmt.Errorf("[journal] dir %v", err)
	}
	if len(w) == 0 {
		return fmt.Errorf("[journal] dir %s is in an object store, and no writable root is: a local journal needs a local directory", p.Journal.Dir)
	}
	for _, r := range roots {
		if r.Bucket == j.Bucket && (prefixWithin(j.Prefix, r.Prefix) || prefixWithin(r.Prefix, j.Prefix)) {
			return fmt.Errorf("[journal] dir %s overlaps the root %s: fsbox's commands could reach its own journal; put it outside every root", p.Journal.Dir, r)
		}
	}
	return nil
}

// prefixWithin: the keys below prefix in lie below dir too ("" holds
// every key).
func prefixWithin(in, dir string) bool {
	return dir == "" || in == dir || strings.HasPrefix(in, dir+"/")
}

// CheckTenantJournal: a journal in the store names every ${VAR} the
// writable object roots name (raw, before expansion), so that each tenant
// a variable tells apart has a journal of its own.
func CheckTenantJournal(rawJournal string, rawRoots []string) error {
	if !IsObjectURL(rawJournal) {
		return nil
	}
	have := map[string]bool{}
	for _, v := range varsOf(rawJournal) {
		have[v] = true
	}
	for _, r := range rawRoots {
		if !IsObjectURL(r) {
			continue
		}
		for _, v := range varsOf(r) {
			if !have[v] {
				return fmt.Errorf("[journal] dir %s does not name ${%s}, which the writable root %s names: tenants told apart by it would share one journal", rawJournal, v, r)
			}
		}
	}
	return nil
}

// varsOf is the names of the ${VAR}s (and $VARs) in s.
func varsOf(s string) []string {
	var out []string
	os.Expand(s, func(name string) string {
		out = append(out, name)
		return ""
	})
	return out
}

// CheckEndpoint refuses an endpoint that is not https:// unless it is on
// loopback (SPEC §4: config).
func CheckEndpoint(ep string) error {
	u, err := url.Parse(ep)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("[store] endpoint %q is not an http(s) URL", ep)
	}
	if u.Scheme == "https" {
		return nil
	}
	host := u.Hostname()
	// net/netip, not net: fsbox links no network package (its init would
	// be paid by every local call).
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() || host == "localhost" {
		return nil
	}
	return fmt.Errorf("[store] endpoint %q must be https:// (plain http only on loopback)", ep)
}

// expandObjectRoot expands the ${VAR}s of an object root's URL, each
// value a safe key component (TenantValue), and returns the URL in its
// canonical form.
func expandObjectRoot(s string, getenv func(string) (string, bool)) (string, error) {
	var bad error
	s = os.Expand(s, func(name string) string {
		v, ok := getenv(name)
		switch {
		case bad != nil:
		case !ok || v == "":
			bad = fmt.Errorf("environment variable %s is unset or empty", name)
		default:
			bad = TenantValue(name, v)
		}
		return v
	})
	if bad != nil {
		return "", bad
	}
	u, err := ParseObjectURL(s)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}
