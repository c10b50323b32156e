// Package rawops is what a user writes with the AWS SDK for Go v2 to do
// what fsbox's stat, read, ls and grep do on an object root: the bench's
// rival for the s3-* rows, run whole-process by s3raw (its main package)
// and warm in-process by the s3-mcp-* rows. It uses the SDK's defaults:
// config.LoadDefaultConfig (the default credential chain), the endpoint
// and path style the only settings.
package rawops

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Concurrency is how many GetObjects grep keeps in flight (fsbox's
// [store] concurrency default).
const Concurrency = 16

// Client is an S3 client and the bucket it works in.
type Client struct {
	S3     *s3.Client
	Bucket string
}

// New loads the default configuration (environment, shared files,
// credential chain) and makes a client for endpoint ("" for AWS's).
func New(ctx context.Context, bucket, endpoint string, pathStyle bool) (*Client, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, err
	}
	c := s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.UsePathStyle = pathStyle
	})
	return &Client{S3: c, Bucket: bucket}, nil
}

// Stat is HeadObject: it prints the key, size, mtime and ETag.
func (c *Client) Stat(ctx context.Context, w io.Writer, key string) error {
	out, err := c.S3.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &c.Bucket, Key: &key})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", key, aws.ToInt64(out.ContentLength),
		aws.ToTime(out.LastModified).UTC().Format("2006-01-02T15:04:05Z"), aws.ToString(out.ETag))
	return err
}

// Read is GetObject, the body copied to w whole.
func (c *Client) Read(ctx context.Context, w io.Writer, key string) error {
	out, err := c.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: &c.Bucket, Key: &key})
	if err != nil {
		return err
	}
	defer out.Body.Close()
	_, err = io.Copy(w, out.Body)
	return err
}

// Ls is ListObjectsV2 of prefix with the delimiter '/' (every page): it
// prints each common prefix, then each key with its size and mtime.
func (c *Client) Ls(ctx context.Context, w io.Writer, prefix string) error {
	p := s3.NewListObjectsV2Paginator(c.S3, &s3.ListObjectsV2Input{Bucket: &c.Bucket, Prefix: &prefix, Delimiter: aws.String("/")})
	bw := bufio.NewWriter(w)
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for _, cp := range page.CommonPrefixes {
			fmt.Fprintf(bw, "%s\tdir\n", aws.ToString(cp.Prefix))
		}
		for _, o := range page.Contents {
			fmt.Fprintf(bw, "%s\t%d\t%s\n", aws.ToString(o.Key), aws.ToInt64(o.Size),
				aws.ToTime(o.LastModified).UTC().Format("2006-01-02T15:04:05Z"))
		}
	}
	return bw.Flush()
}

// Grep lists prefix (every page, no delimiter: the whole tree), then
// GETs each object, Concurrency at a time, matches re line by line and
// prints KEY:LINE:TEXT for each match in key order. It returns the
// number of matching lines.
func (c *Client) Grep(ctx context.Context, w io.Writer, re *regexp.Regexp, prefix string) (int, error) {
	var keys []string
	p := s3.NewListObjectsV2Paginator(c.S3, &s3.ListObjectsV2Input{Bucket: &c.Bucket, Prefix: &prefix})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, err
		}
		for _, o := range page.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
	}
	results := make([][]byte, len(keys))
	errs := make([]error, len(keys))
	counts := make([]int, len(keys))
	sem := make(chan struct{}, Concurrency)
	var wg sync.WaitGroup
	for i, key := range keys {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out, err := c.S3.GetObject(ctx, &s3.GetObjectInput{Bucket: &c.Bucket, Key: &key})
			if err != nil {
				errs[i] = err
				return
			}
			defer out.Body.Close()
			var buf bytes.Buffer
			sc := bufio.NewScanner(out.Body)
			sc.Buffer(make([]byte, 64<<10), 16<<20)
			for n := 1; sc.Scan(); n++ {
				if re.Match(sc.Bytes()) {
					fmt.Fprintf(&buf, "%s:%d:%s\n", key, n, sc.Bytes())
					counts[i]++
				}
			}
			results[i], errs[i] = buf.Bytes(), sc.Err()
		}()
	}
	wg.Wait()
	total := 0
	for i := range keys {
		if errs[i] != nil {
			return total, fmt.Errorf("%s: %w", keys[i], errs[i])
		}
		if _, err := w.Write(results[i]); err != nil {
			return total, err
		}
		total += counts[i]
	}
	return total, nil
}
