package s3store

// The conformance probes of store check (SPEC §4, Object roots,
// [bucket-write]): what the server does with the requests fsbox's changes
// rely on, measured with raw requests of the SDK's client (the server is
// what is measured, so nothing of the store's own mapping stands in
// between). Every key written lies under the scratch prefix the sandbox
// chose (a fresh random prefix inside a writable object root) and is one
// of probeKeys; the sandbox checks them against the policy first and
// removes the scratch after. Every loop is bounded by a count, and every
// request counts against the call's [store] max_requests.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// The probes' names (stable: scripts read them).
const (
	ProbeCondPutIfNoneMatchRace = "cond_put_if_none_match_race"
	ProbeCondPutIfMatchRace     = "cond_put_if_match_race"
	ProbeCondGet                = "cond_get"
	ProbeCondDelete             = "cond_delete"
	ProbeSuffixRange            = "suffix_range"
	ProbeVerifiedSHA256         = "verified_sha256"
	ProbeListDelimiterAfter     = "list_delimiter_start_after"
	ProbeNoTornReads            = "no_torn_reads"
	ProbeCopyDestConditions     = "copy_dest_conditions"
)

// ProbeNames are the probes in the order they run and are reported.
var ProbeNames = []string{
	ProbeCondPutIfNoneMatchRace, ProbeCondPutIfMatchRace, ProbeCondGet, ProbeCondDelete,
	ProbeSuffixRange, ProbeVerifiedSHA256, ProbeListDelimiterAfter, ProbeNoTornReads, ProbeCopyDestConditions,
}

// The keys the probes write, relative to the scratch prefix.
const (
	keyRaceAbsent    = "race-absent"
	keyRaceMatch     = "race-match"
	keyCondGet       = "cond-get"
	keyCondDelete    = "cond-delete"
	keyCondDeleteNot = "cond-delete-missing" // only a DELETE: it never exists
	keySuffix        = "suffix"
	keySHA256        = "sha256"
	keyListDir       = "list/"
	keyTorn          = "torn"
	keyCopySrc       = "copy-src"
	keyCopyDst       = "copy-dst"
	keyCopyNew       = "copy-new"
)

// listKeys are the keys of the listing probe, below keyListDir.
var listKeys = []string{"a", "b/1", "b/2", "c", "d/1"}

// The bounds of the racing probes.
const (
	raceWriters = 16        // concurrent conditional PUTs on one key
	tornRounds  = 6         // PUTs raced by GETs
	tornReaders = 3         // GETs per round
	tornSize    = 256 << 10 // bytes of each body
	listPages   = 10        // pages of the paged listing, at most
	maxProbeGet = 1 << 20   // the most a probe reads of one reply
	wrongETag   = `"00000000000000000000000000000000"`
)

// ProbeKeys names every key ProbeStore may write, relative to the
// scratch prefix (sandbox.StoreProber).
func (s *store) ProbeKeys() []string {
	keys := []string{keyRaceAbsent, keyRaceMatch, keyCondGet, keyCondDelete, keyCondDeleteNot, keySuffix, keySHA256,
		keyTorn, keyCopySrc, keyCopyDst, keyCopyNew}
	for _, k := range listKeys {
		keys = append(keys, keyListDir+k)
	}
	return keys
}

// prober runs the probes of one call under one scratch prefix.
type prober struct {
	s       *store
	scratch string // root-relative, ending in '/'
}

// ProbeStore runs every probe under scratch (root-relative, ending in
// '/'), in ProbeNames' order (sandbox.StoreProber). It stops at the
// call's end (deadline, request cap): the probes run so far, and the
// context's error.
func (s *store) ProbeStore(ctx context.Context, scratch string) ([]sandbox.ProbeResult, error) {
	if !strings.HasSuffix(scratch, "/") {
		return nil, fmt.Errorf("a scratch prefix ends in '/', not %q", scratch)
	}
	for _, k := range append([]string{""}, s.ProbeKeys()...) {
		if _, err := s.full(scratch+k, false); err != nil { // refused before any request: too long, say
			return nil, err
		}
	}
	p := &prober{s: s, scratch: scratch}
	runs := []func(context.Context) sandbox.ProbeResult{
		p.raceIfNoneMatch, p.raceIfMatch, p.condGet, p.condDelete,
		p.suffixRange, p.verifiedSHA256, p.listDelimiterAfter, p.noTornReads, p.copyDestConditions,
	}
	var out []sandbox.ProbeResult
	for _, run := range runs {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r := run(ctx)
		if err := ctx.Err(); err != nil {
			return out, err // the probe's reply is the deadline's, not the server's
		}
		out = append(out, r)
	}
	return out, nil
}

// key is the full key of a probe's key name.
func (p *prober) key(name string) string { return p.s.prefix + p.scratch + name }

// reply is a request's outcome: its HTTP status (200 for success, 0
// when no reply came) and how it reads.
type reply struct {
	status int
	code   string // the S3 error code
	err    error
}

func replyOf(err error) reply {
	if err == nil {
		return reply{status: http.StatusOK}
	}
	a := reply{status: status(err), err: err}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		a.code = ae.ErrorCode()
	}
	return a
}

func (a reply) ok() bool { return a.err == nil }

// refused: the server refused the condition (412; or 409, which S3 gives
// a conditional write racing another).
func (a reply) refused() bool {
	return a.status == http.StatusPreconditionFailed || a.status == http.StatusConflict
}

func (a reply) String() string {
	switch {
	case a.err == nil:
		return "success"
	case a.status == 0:
		return "no reply (" + firstLine(a.err.Error()) + ")"
	case a.code != "":
		return fmt.Sprintf("%d %s", a.status, a.code)
	}
	return fmt.Sprint(a.status)
}

// tally counts answers by how they read: "412 PreconditionFailed ×15".
func tally(as []reply) string {
	n := map[string]int{}
	for _, a := range as {
		n[a.String()]++
	}
	keys := make([]string, 0, len(n))
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s ×%d", k, n[k])
	}
	return strings.Join(parts, ", ")
}

// put PUTs body at key with its sha256 (sum, when given, in its place),
// conditioned by ifNoneMatch or ifMatch: the ETag stored.
func (p *prober) put(ctx context.Context, key string, body []byte, ifNoneMatch, ifMatch string, sum []byte) (string, reply) {
	if err := sandbox.TakeRequest(ctx); err != nil {
		return "", replyOf(err)
	}
	if sum == nil {
		h := sha256.Sum256(body)
		sum = h[:]
	}
	in := &s3.PutObjectInput{Bucket: &p.s.bucket, Key: aws.String(p.key(key)), Body: bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))), ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum))}
	if ifNoneMatch != "" {
		in.IfNoneMatch = &ifNoneMatch
	}
	if ifMatch != "" {
		in.IfMatch = &ifMatch
	}
	out, err := p.s.c.s3.PutObject(ctx, in)
	if err != nil {
		return "", replyOf(err)
	}
	return etag(out.ETag), reply{status: http.StatusOK}
}

// got is a GET's reply.
type got struct {
	body         []byte
	etag         string
	contentRange string
}

// get GETs key (rng: a Range header, or ""), conditioned by ifMatch or
// ifNoneMatch; at most maxProbeGet bytes of the body are read.
func (p *prober) get(ctx context.Context, key, rng, ifMatch, ifNoneMatch string) (got, reply) {
	if err := sandbox.TakeRequest(ctx); err != nil {
		return got{}, replyOf(err)
	}
	in := &s3.GetObjectInput{Bucket: &p.s.bucket, Key: aws.String(p.key(key))}
	if rng != "" {
		in.Range = &rng
	}
	if ifMatch != "" {
		in.IfMatch = &ifMatch
	}
	if ifNoneMatch != "" {
		in.IfNoneMatch = &ifNoneMatch
	}
	out, err := p.s.c.s3.GetObject(ctx, in)
	if err != nil {
		return got{}, replyOf(err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(io.LimitReader(out.Body, maxProbeGet))
	if err != nil {
		return got{}, replyOf(err)
	}
	return got{body: b, etag: etag(out.ETag), contentRange: aws.ToString(out.ContentRange)}, reply{status: http.StatusOK}
}

// head HEADs key, asking for its checksum.
func (p *prober) head(ctx context.Context, key string) (*s3.HeadObjectOutput, reply) {
	if err := sandbox.TakeRequest(ctx); err != nil {
		return nil, replyOf(err)
	}
	out, err := p.s.c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &p.s.bucket, Key: aws.String(p.key(key)),
		ChecksumMode: types.ChecksumModeEnabled})
	return out, replyOf(err)
}

// del DELETEs key, conditioned by ifMatch when set.
func (p *prober) del(ctx context.Context, key, ifMatch string) reply {
	if err := sandbox.TakeRequest(ctx); err != nil {
		return replyOf(err)
	}
	in := &s3.DeleteObjectInput{Bucket: &p.s.bucket, Key: aws.String(p.key(key))}
	if ifMatch != "" {
		in.IfMatch = &ifMatch
	}
	_, err := p.s.c.s3.DeleteObject(ctx, in)
	return replyOf(err)
}

func result(name string, ok bool, format string, args ...any) sandbox.ProbeResult {
	return sandbox.ProbeResult{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)}
}

// race runs n PUTs of key at once, the i-th with body i, conditioned by
// ifNoneMatch or ifMatch: each one's reply.
func (p *prober) race(ctx context.Context, key string, bodies [][]byte, ifNoneMatch, ifMatch string) []reply {
	as := make([]reply, len(bodies))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range bodies {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, as[i] = p.put(ctx, key, bodies[i], ifNoneMatch, ifMatch, nil)
		}()
	}
	close(start)
	wg.Wait()
	return as
}

// judgeRace: exactly one PUT stored, every other refused (412 or 409),
// and the key holds the one that won.
func (p *prober) judgeRace(ctx context.Context, name, what, key string, bodies [][]byte, as []reply) sandbox.ProbeResult {
	won := -1
	wins, refused := 0, 0
	for i, a := range as {
		switch {
		case a.ok():
			wins++
			won = i
		case a.refused():
			refused++
		}
	}
	desc := fmt.Sprintf("%d concurrent PUTs %s: %d stored, %d refused (%s)", len(as), what, wins, refused, tally(as))
	if wins != 1 || refused != len(as)-1 {
		return result(name, false, "%s; want exactly one stored and the rest refused (412)", desc)
	}
	g, a := p.get(ctx, key, "", "", "")
	if !a.ok() {
		return result(name, false, "%s; then GET: %s", desc, a)
	}
	if !bytes.Equal(g.body, bodies[won]) {
		return result(name, false, "%s; but the key holds another body than the PUT that was stored", desc)
	}
	return result(name, true, "%s; the key holds the one stored", desc)
}

func racers(tag string) [][]byte {
	bodies := make([][]byte, raceWriters)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, "fsbox store check: %s, writer %02d of %d\n", tag, i, raceWriters)
	}
	return bodies
}

// raceIfNoneMatch: PUTs If-None-Match: * of one new key, at once.
func (p *prober) raceIfNoneMatch(ctx context.Context) sandbox.ProbeResult {
	bodies := racers("if-none-match")
	as := p.race(ctx, keyRaceAbsent, bodies, "*", "")
	return p.judgeRace(ctx, ProbeCondPutIfNoneMatchRace, "If-None-Match: * on one new key", keyRaceAbsent, bodies, as)
}

// raceIfMatch: PUTs If-Match of one ETag, at once.
func (p *prober) raceIfMatch(ctx context.Context) sandbox.ProbeResult {
	name := ProbeCondPutIfMatchRace
	tag, a := p.put(ctx, keyRaceMatch, []byte("fsbox store check: the version every writer names\n"), "", "", nil)
	if !a.ok() {
		return result(name, false, "the first PUT: %s", a)
	}
	if tag == "" {
		return result(name, false, "the first PUT answered no ETag")
	}
	bodies := racers("if-match")
	as := p.race(ctx, keyRaceMatch, bodies, "", tag)
	return p.judgeRace(ctx, name, "If-Match of one ETag", keyRaceMatch, bodies, as)
}

// condGet: a GET If-Match of the version before a change is refused
// (412); of the current one, answered.
func (p *prober) condGet(ctx context.Context) sandbox.ProbeResult {
	name := ProbeCondGet
	v1 := []byte("fsbox store check: version 1\n")
	v2 := []byte("fsbox store check: version 2, longer\n")
	e1, a := p.put(ctx, keyCondGet, v1, "", "", nil)
	if !a.ok() {
		return result(name, false, "PUT: %s", a)
	}
	e2, a := p.put(ctx, keyCondGet, v2, "", "", nil)
	if !a.ok() {
		return result(name, false, "the second PUT: %s", a)
	}
	if e1 == e2 || e1 == "" {
		return result(name, false, "the ETag did not change with the content (%s, then %s)", e1, e2)
	}
	_, old := p.get(ctx, keyCondGet, "", e1, "")
	g, cur := p.get(ctx, keyCondGet, "", e2, "")
	_, none := p.get(ctx, keyCondGet, "", "", e2)
	desc := fmt.Sprintf("GET If-Match the old ETag: %s; the current one: %s; If-None-Match the current one: %s", old, cur, none)
	switch {
	case old.status != http.StatusPreconditionFailed:
		return result(name, false, "%s; want 412 for the old ETag", desc)
	case !cur.ok() || !bytes.Equal(g.body, v2):
		return result(name, false, "%s; want the current content for the current ETag", desc)
	}
	return result(name, true, "%s", desc)
}

// condDelete: a DELETE If-Match of a wrong ETag is refused and the
// object survives; of the right one, it goes. A conditional DELETE of a
// missing key is reported as the server answers it (S3: 404; versitygw:
// success).
func (p *prober) condDelete(ctx context.Context) sandbox.ProbeResult {
	name := ProbeCondDelete
	tag, a := p.put(ctx, keyCondDelete, []byte("fsbox store check: delete me only by my ETag\n"), "", "", nil)
	if !a.ok() {
		return result(name, false, "PUT: %s", a)
	}
	wrong := p.del(ctx, keyCondDelete, wrongETag)
	_, after := p.head(ctx, keyCondDelete)
	survived := after.ok()
	right := p.del(ctx, keyCondDelete, tag)
	_, gone := p.head(ctx, keyCondDelete)
	missing := p.del(ctx, keyCondDeleteNot, tag)
	desc := fmt.Sprintf("DELETE If-Match a wrong ETag: %s, the object then %s; If-Match the right one: %s, the object then %s; If-Match on a missing key: %s",
		wrong, map[bool]string{true: "survives", false: "is gone (" + after.String() + ")"}[survived],
		right, map[bool]string{true: "is gone", false: "still there (" + gone.String() + ")"}[gone.status == http.StatusNotFound],
		missing)
	switch {
	case wrong.ok() || !survived:
		return result(name, false, "%s; want the wrong ETag refused (412) and the object kept", desc)
	case !right.ok() || gone.status != http.StatusNotFound:
		return result(name, false, "%s; want the right ETag to delete", desc)
	}
	return result(name, true, "%s", desc)
}

// suffixRange: Range: bytes=-N is the last N bytes; a suffix longer than
// the object is all of it.
func (p *prober) suffixRange(ctx context.Context) sandbox.ProbeResult {
	name := ProbeSuffixRange
	var body []byte
	for i := 0; len(body) < 100; i++ {
		body = fmt.Appendf(body, "%03d|", i)
	}
	body = body[:100]
	if _, a := p.put(ctx, keySuffix, body, "", "", nil); !a.ok() {
		return result(name, false, "PUT: %s", a)
	}
	g, a := p.get(ctx, keySuffix, "bytes=-10", "", "")
	if !a.ok() {
		return result(name, false, "GET Range bytes=-10 of 100 bytes: %s", a)
	}
	if !bytes.Equal(g.body, body[90:]) {
		return result(name, false, "GET Range bytes=-10 of 100 bytes gave %d bytes (Content-Range %q), not the last 10", len(g.body), g.contentRange)
	}
	g2, a := p.get(ctx, keySuffix, "bytes=-1000", "", "")
	if !a.ok() {
		return result(name, false, "GET Range bytes=-10 gave the last 10 bytes; bytes=-1000 of 100 bytes: %s, want all 100", a)
	}
	if !bytes.Equal(g2.body, body) {
		return result(name, false, "GET Range bytes=-10 gave the last 10 bytes; bytes=-1000 of 100 bytes gave %d bytes, want all 100", len(g2.body))
	}
	return result(name, true, "GET Range bytes=-10 of 100 bytes gave the last 10 (Content-Range %q); bytes=-1000 gave all 100", g.contentRange)
}

// verifiedSHA256: a PUT whose x-amz-checksum-sha256 is not its content's
// is refused and stores nothing; a right one is stored, and HEAD with
// checksum mode on gives it back.
func (p *prober) verifiedSHA256(ctx context.Context) sandbox.ProbeResult {
	name := ProbeVerifiedSHA256
	body := []byte("fsbox store check: a body whose sha256 the server verifies\n")
	other := sha256.Sum256([]byte("fsbox store check: another body\n"))
	_, bad := p.put(ctx, keySHA256, body, "", "", other[:])
	_, after := p.head(ctx, keySHA256)
	if bad.ok() || after.status != http.StatusNotFound {
		return result(name, false, "PUT with the sha256 of another body: %s, and the key then: %s; want it refused and nothing stored", bad, after)
	}
	sum := sha256.Sum256(body)
	if _, a := p.put(ctx, keySHA256, body, "", "", sum[:]); !a.ok() {
		return result(name, false, "PUT with a wrong sha256 refused (%s); with the right one: %s", bad, a)
	}
	h, a := p.head(ctx, keySHA256)
	if !a.ok() {
		return result(name, false, "PUT with a wrong sha256 refused (%s); HEAD after the right one: %s", bad, a)
	}
	back := fullSHA256(h.ChecksumSHA256, h.ChecksumType)
	if back != hex.EncodeToString(sum[:]) {
		return result(name, false, "PUT with a wrong sha256 refused (%s); HEAD with checksum mode on gave %q, not the sha256 sent", bad, aws.ToString(h.ChecksumSHA256))
	}
	return result(name, true, "PUT with the sha256 of another body refused (%s), nothing stored; HEAD with checksum mode on gives the sha256 sent back", bad)
}

// listing is a listing's keys and prefixes, relative to the listed
// prefix, in the order given.
type listing struct{ keys, prefixes []string }

func (l listing) String() string {
	return fmt.Sprintf("keys %v, prefixes %v", l.keys, l.prefixes)
}

// list lists the listing probe's directory with delimiter "/" after
// startAfter (relative, or ""), up to pages pages of maxKeys (0: the
// server's page).
func (p *prober) list(ctx context.Context, startAfter string, maxKeys int32, pages int) (listing, []string, reply) {
	dir := p.key(keyListDir)
	in := &s3.ListObjectsV2Input{Bucket: &p.s.bucket, Prefix: &dir, Delimiter: aws.String("/")}
	if startAfter != "" {
		in.StartAfter = aws.String(dir + startAfter)
	}
	if maxKeys > 0 {
		in.MaxKeys = &maxKeys
	}
	var l listing
	var merged []string // each page's keys and prefixes in key order, page after page
	for range pages {
		if err := sandbox.TakeRequest(ctx); err != nil {
			return l, merged, replyOf(err)
		}
		out, err := p.s.c.s3.ListObjectsV2(ctx, in)
		if err != nil {
			return l, merged, replyOf(err)
		}
		var page []string
		for _, o := range out.Contents {
			k := strings.TrimPrefix(aws.ToString(o.Key), dir)
			l.keys = append(l.keys, k)
			page = append(page, k)
		}
		for _, cp := range out.CommonPrefixes {
			k := strings.TrimPrefix(aws.ToString(cp.Prefix), dir)
			l.prefixes = append(l.prefixes, k)
			page = append(page, k)
		}
		sort.Strings(page)
		merged = append(merged, page...)
		token := aws.ToString(out.NextContinuationToken)
		if !aws.ToBool(out.IsTruncated) || token == "" {
			return l, merged, reply{status: http.StatusOK}
		}
		in.ContinuationToken, in.StartAfter = &token, nil
	}
	return l, merged, reply{status: http.StatusOK}
}

// listDelimiterAfter: ListObjectsV2 with delimiter "/" groups the
// deeper keys into prefixes; StartAfter starts after its key; paged one
// entry at a time, the pages make the same listing.
func (p *prober) listDelimiterAfter(ctx context.Context) sandbox.ProbeResult {
	name := ProbeListDelimiterAfter
	for _, k := range listKeys {
		if _, a := p.put(ctx, keyListDir+k, []byte("fsbox store check: "+k+"\n"), "", "", nil); !a.ok() {
			return result(name, false, "PUT %s: %s", k, a)
		}
	}
	cases := []struct {
		what       string
		after      string
		want       listing
		maxKeys    int32
		wantMerged []string
	}{
		{what: "delimiter /", want: listing{[]string{"a", "c"}, []string{"b/", "d/"}}},
		{what: "delimiter / after a", after: "a", want: listing{[]string{"c"}, []string{"b/", "d/"}}},
		{what: "delimiter / after b/2", after: "b/2", want: listing{[]string{"c"}, []string{"d/"}}},
		{what: "delimiter /, one entry a page", maxKeys: 1, wantMerged: []string{"a", "b/", "c", "d/"}},
	}
	var said []string
	for _, c := range cases {
		pages := 1
		if c.maxKeys > 0 {
			pages = listPages
		}
		l, merged, a := p.list(ctx, c.after, c.maxKeys, pages)
		if !a.ok() {
			return result(name, false, "list %s: %s", c.what, a)
		}
		if c.wantMerged != nil {
			if !slices.Equal(merged, c.wantMerged) {
				return result(name, false, "list %s gave %v over its pages, want %v", c.what, merged, c.wantMerged)
			}
		} else if !slices.Equal(l.keys, c.want.keys) || !slices.Equal(l.prefixes, c.want.prefixes) {
			return result(name, false, "list %s gave %s, want %s", c.what, l, c.want)
		}
		said = append(said, c.what)
	}
	return result(name, true, "ListObjectsV2 of a, b/1, b/2, c, d/1 as expected: %s", strings.Join(said, "; "))
}

// noTornReads: GETs racing a PUT of another body of the same size each
// give one of the two bodies whole.
func (p *prober) noTornReads(ctx context.Context) sandbox.ProbeResult {
	name := ProbeNoTornReads
	body := func(round int) []byte { return bytes.Repeat([]byte{byte('a' + round%26)}, tornSize) }
	if _, a := p.put(ctx, keyTorn, body(0), "", "", nil); !a.ok() {
		return result(name, false, "PUT: %s", a)
	}
	gets := 0
	for round := 0; round < tornRounds; round++ {
		old, next := body(round), body(round+1)
		var wg sync.WaitGroup
		var put reply
		gs := make([]got, tornReaders)
		as := make([]reply, tornReaders)
		start := make(chan struct{})
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, put = p.put(ctx, keyTorn, next, "", "", nil)
		}()
		for i := range tornReaders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				gs[i], as[i] = p.get(ctx, keyTorn, "", "", "")
			}()
		}
		close(start)
		wg.Wait()
		if !put.ok() {
			return result(name, false, "round %d: the PUT: %s", round+1, put)
		}
		for i := range tornReaders {
			gets++
			switch {
			case !as[i].ok():
				return result(name, false, "round %d: a GET racing the PUT of another body: %s, want one of the two bodies", round+1, as[i])
			case !bytes.Equal(gs[i].body, old) && !bytes.Equal(gs[i].body, next):
				return result(name, false, "round %d: a GET racing the PUT of another body of %d bytes gave %d bytes that are neither body whole (a torn read)", round+1, tornSize, len(gs[i].body))
			}
		}
	}
	return result(name, true, "%d GETs racing %d PUTs of another body of %d bytes each gave one of the two bodies whole", gets, tornRounds, tornSize)
}

// copyDestConditions: CopyObject with If-None-Match: * over an existing
// destination, or If-Match of a wrong ETag, is refused and the
// destination kept; with If-Match of its ETag, and If-None-Match: * to a
// new key, the copy is made.
func (p *prober) copyDestConditions(ctx context.Context) sandbox.ProbeResult {
	name := ProbeCopyDestConditions
	src := []byte("fsbox store check: the copy's source\n")
	dst := []byte("fsbox store check: the copy's destination, kept unless asked\n")
	if _, a := p.put(ctx, keyCopySrc, src, "", "", nil); !a.ok() {
		return result(name, false, "PUT the source: %s", a)
	}
	dtag, a := p.put(ctx, keyCopyDst, dst, "", "", nil)
	if !a.ok() {
		return result(name, false, "PUT the destination: %s", a)
	}
	holds := func(key string, want []byte) (bool, reply) {
		g, a := p.get(ctx, key, "", "", "")
		return a.ok() && bytes.Equal(g.body, want), a
	}
	var said []string
	fail := false
	// Over an existing destination: both conditions must refuse and
	// keep it (restored between, should a server copy anyway).
	for _, c := range []struct{ what, ifNoneMatch, ifMatch string }{
		{"If-None-Match: * over an existing destination", "*", ""},
		{"If-Match of a wrong ETag", "", wrongETag},
	} {
		a := p.copy(ctx, keyCopySrc, keyCopyDst, c.ifNoneMatch, c.ifMatch)
		kept, ga := holds(keyCopyDst, dst)
		switch {
		case !ga.ok():
			said = append(said, fmt.Sprintf("%s: %s, then GET of the destination: %s", c.what, a, ga))
			fail = true
		case a.ok() || !kept:
			said = append(said, fmt.Sprintf("%s: %s, the destination %s (ignored)", c.what, a,
				map[bool]string{true: "kept", false: "overwritten"}[kept]))
			fail = true
			if !kept {
				if dtag, a = p.put(ctx, keyCopyDst, dst, "", "", nil); !a.ok() {
					return result(name, false, "%s; PUT the destination back: %s", strings.Join(said, "; "), a)
				}
			}
		default:
			said = append(said, fmt.Sprintf("%s: %s, the destination kept", c.what, a))
		}
	}
	a = p.copy(ctx, keyCopySrc, keyCopyDst, "", dtag)
	copied, _ := holds(keyCopyDst, src)
	said = append(said, fmt.Sprintf("If-Match of the destination's ETag: %s", a))
	if !a.ok() || !copied {
		fail = true
	}
	a = p.copy(ctx, keyCopySrc, keyCopyNew, "*", "")
	made, _ := holds(keyCopyNew, src)
	said = append(said, fmt.Sprintf("If-None-Match: * to a new key: %s", a))
	if !a.ok() || !made {
		fail = true
	}
	return result(name, !fail, "CopyObject %s", strings.Join(said, "; "))
}

// copy copies the probe's key from to to, conditioned on the
// destination by ifNoneMatch or ifMatch.
func (p *prober) copy(ctx context.Context, from, to, ifNoneMatch, ifMatch string) reply {
	if err := sandbox.TakeRequest(ctx); err != nil {
		return replyOf(err)
	}
	in := &s3.CopyObjectInput{Bucket: &p.s.bucket, Key: aws.String(p.key(to)),
		CopySource: aws.String(copySource(p.s.bucket, p.key(from)))}
	if ifNoneMatch != "" {
		in.IfNoneMatch = &ifNoneMatch
	}
	if ifMatch != "" {
		in.IfMatch = &ifMatch
	}
	_, err := p.s.c.s3.CopyObject(ctx, in)
	return replyOf(err)
}

// copySource is CopyObject's x-amz-copy-source: BUCKET/KEY, the key
// URL-encoded but for its slashes.
func copySource(bucket, key string) string {
	return bucket + "/" + escapeKey(key)
}

// ProbeOutside asks, with reads only, outside every root in roots (the
// policy's object roots) whether the credentials reach there: the
// account's bucket list, and unless a root is this whole bucket, a
// listing of the bucket's top (one key at most) and a HEAD of a random
// key at its top (sandbox.StoreProber). Any reply but 403 (or 401)
// reaches: a 404 means the store was asked and answered.
func (s *store) ProbeOutside(ctx context.Context, roots []policy.ObjectURL) sandbox.Outside {
	var reqs []sandbox.OutsideRequest
	add := func(req, target string, err error) {
		a := replyOf(err)
		reaches := a.status != 0 && a.status != http.StatusForbidden && a.status != http.StatusUnauthorized
		reqs = append(reqs, sandbox.OutsideRequest{Request: req, Target: target, Reaches: reaches, Answer: a.String()})
	}
	if err := sandbox.TakeRequest(ctx); err != nil {
		add("list_buckets", policy.S3Scheme, err)
	} else {
		_, err := s.c.s3.ListBuckets(ctx, &s3.ListBucketsInput{MaxBuckets: aws.Int32(1)})
		add("list_buckets", policy.S3Scheme, err)
	}
	whole := false
	for _, r := range roots {
		whole = whole || r.Bucket == s.bucket && r.Prefix == ""
	}
	if !whole {
		top := policy.S3Scheme + s.bucket
		if err := sandbox.TakeRequest(ctx); err != nil {
			add("list_bucket", top, err)
		} else {
			_, err := s.c.s3.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &s.bucket, MaxKeys: aws.Int32(1)})
			add("list_bucket", top, err)
		}
		key := outsideKey(roots, s.bucket)
		if err := sandbox.TakeRequest(ctx); err != nil {
			add("head_outside", top+"/"+key, err)
		} else {
			_, err := s.c.s3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &s.bucket, Key: &key})
			add("head_outside", top+"/"+key, err)
		}
	}
	o := sandbox.Outside{Requests: reqs}
	var reached []string
	for _, q := range reqs {
		if q.Reaches {
			o.Reaches = true
			reached = append(reached, fmt.Sprintf("%s %s (%s)", q.Request, q.Target, q.Answer))
		}
	}
	switch {
	case o.Reaches:
		o.Detail = "the credentials reach outside the policy's roots: " + strings.Join(reached, ", ") +
			" answered; scope them to the roots (an IAM session policy) before turning writes on"
	case whole:
		o.Detail = "a root is the whole bucket s3://" + s.bucket + ", so only the account's bucket list lies outside it, and that was refused"
	default:
		o.Detail = "every request outside the policy's roots was refused"
	}
	return o
}

// outsideKey is a random key at the top of bucket that lies in no root
// of roots.
func outsideKey(roots []policy.ObjectURL, bucket string) string {
	for {
		var b [8]byte
		rand.Read(b[:])
		key := "fsbox-store-check-outside-" + hex.EncodeToString(b[:])
		in := false
		for _, r := range roots {
			in = in || r.Bucket == bucket && (r.Prefix == "" || key == r.Prefix || strings.HasPrefix(key, r.Prefix+"/"))
		}
		if !in {
			return key
		}
	}
}
