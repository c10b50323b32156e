package rawops

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// The durable changes a careful user writes with the SDK, making the
// same conditional requests fsbox's edit and patch make on an object
// root with its journal in the bucket: the prior version copied in the
// store to a journal key (conditioned on the version read), the change
// conditioned on that version (If-Match), the record a new key
// (If-None-Match); a patch of several objects writes its plan first and
// removes it after. No retry, no rollback: on the bench's quiet bucket
// every condition holds.

// object is a version read whole.
type object struct {
	key, etag string
	body      []byte
}

func (c *Client) get(ctx context.Context, key string) (object, error) {
	out, err := c.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: &c.Bucket, Key: &key})
	if err != nil {
		return object{}, err
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	return object{key: key, etag: aws.ToString(out.ETag), body: b}, err
}

// put writes body with its sha256 for the server to verify, on the
// condition ifMatch ("*" with none: If-None-Match: *).
func (c *Client) put(ctx context.Context, key string, body []byte, ifMatch string, ifNone bool) error {
	sum := sha256.Sum256(body)
	in := &s3.PutObjectInput{Bucket: &c.Bucket, Key: &key, Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:]))}
	if ifMatch != "" {
		in.IfMatch = aws.String(ifMatch)
	}
	if ifNone {
		in.IfNoneMatch = aws.String("*")
	}
	_, err := c.S3.PutObject(ctx, in)
	return err
}

// keep copies the version o of its key to journal/objects/SHA256.
func (c *Client) keep(ctx context.Context, journal string, o object) error {
	sum := sha256.Sum256(o.body)
	dst := journal + "objects/" + hex.EncodeToString(sum[:])
	src := c.Bucket + "/" + o.key
	_, err := c.S3.CopyObject(ctx, &s3.CopyObjectInput{Bucket: &c.Bucket, Key: &dst, CopySource: &src,
		CopySourceIfMatch: aws.String(o.etag), ChecksumAlgorithm: types.ChecksumAlgorithmSha256})
	return err
}

// record writes a change's record under a fresh key.
func (c *Client) record(ctx context.Context, journal string, what string) error {
	var id [8]byte
	rand.Read(id[:])
	return c.put(ctx, journal+"changes/"+hex.EncodeToString(id[:])+".json", []byte(what), "", true)
}

// Edit replaces old with new in key, durably: GET, the prior version
// kept, PUT If-Match, the record.
func (c *Client) Edit(ctx context.Context, w io.Writer, key, old, new, journal string) error {
	o, err := c.get(ctx, key)
	if err != nil {
		return err
	}
	if !bytes.Contains(o.body, []byte(old)) {
		return fmt.Errorf("%s does not hold %q", key, old)
	}
	if err := c.keep(ctx, journal, o); err != nil {
		return err
	}
	body := bytes.Replace(o.body, []byte(old), []byte(new), 1)
	if err := c.put(ctx, key, body, o.etag, false); err != nil {
		return err
	}
	if err := c.record(ctx, journal, `{"command":"edit","path":"`+key+`"}`); err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", key)
	return err
}

// Patch replaces old with new in each key, durably and all together: each
// read and kept, the plan written, each PUT If-Match in order, the plan
// removed, the record.
func (c *Client) Patch(ctx context.Context, w io.Writer, keys []string, old, new, journal string) error {
	var objs []object
	for _, k := range keys {
		o, err := c.get(ctx, k)
		if err != nil {
			return err
		}
		if !bytes.Contains(o.body, []byte(old)) {
			return fmt.Errorf("%s does not hold %q", k, old)
		}
		if err := c.keep(ctx, journal, o); err != nil {
			return err
		}
		objs = append(objs, o)
	}
	plan := journal + "pending/plan.json"
	if err := c.put(ctx, plan, []byte(`{"items":["`+strings.Join(keys, `","`)+`"]}`), "", true); err != nil {
		return err
	}
	for _, o := range objs {
		if err := c.put(ctx, o.key, bytes.Replace(o.body, []byte(old), []byte(new), 1), o.etag, false); err != nil {
			return err
		}
	}
	if _, err := c.S3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &c.Bucket, Key: &plan}); err != nil {
		return err
	}
	if err := c.record(ctx, journal, `{"command":"patch"}`); err != nil {
		return err
	}
	for _, k := range keys {
		fmt.Fprintf(w, "%s\n", k)
	}
	return nil
}
