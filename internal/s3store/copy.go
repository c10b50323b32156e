package s3store

import (
	"context"
	"net/url"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/fsbox/fsbox/pkg/sandbox"
)

// Copy copies srcKey of src (another view of a client with the same
// credentials) to key in the store, conditioned on the source's version
// (x-amz-copy-source-if-match): no byte passes through fsbox. The copy
// keeps the source's sha256 (the store computes it for the copy). A
// destination condition is never relied on: not every server honours
// one (versitygw v1.8.0 ignores them); the journal writes each copy to a
// key of its own.
func (s *store) Copy(ctx context.Context, key string, src sandbox.ObjectStore, srcKey, ifVersion string) (sandbox.Object, error) {
	from, ok := src.(*store)
	if !ok || from.c != s.c {
		return sandbox.Object{}, sandbox.ErrCannotCopy
	}
	full, err := s.full(key, false)
	if err != nil {
		return sandbox.Object{}, err
	}
	fromFull, err := from.full(srcKey, false)
	if err != nil {
		return sandbox.Object{}, err
	}
	source := from.bucket + "/" + escapeKey(fromFull)
	in := &s3.CopyObjectInput{Bucket: &s.bucket, Key: &full, CopySource: &source, ChecksumAlgorithm: types.ChecksumAlgorithmSha256}
	if ifVersion != "" {
		in.CopySourceIfMatch = aws.String(ifVersion)
	}
	out, err := s.c.s3.CopyObject(ctx, in)
	if err != nil {
		return sandbox.Object{}, from.mapErr(ctx, "copy", srcKey, fromFull, ifVersion != "", err)
	}
	ob := sandbox.Object{Key: key}
	if r := out.CopyObjectResult; r != nil {
		ob.Version = etag(r.ETag)
		if r.LastModified != nil {
			ob.MTime = *r.LastModified
		}
	}
	return ob, nil
}

// escapeKey escapes a key for x-amz-copy-source, each '/' kept: every
// byte but the unreserved ones is %-encoded ('+' too, which a server
// would read as a space, and a space as %20).
func escapeKey(k string) string {
	parts := strings.Split(k, "/")
	for i, p := range parts {
		parts[i] = strings.ReplaceAll(url.QueryEscape(p), "+", "%20")
	}
	return strings.Join(parts, "/")
}
