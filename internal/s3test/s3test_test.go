package s3test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

func TestS3ServerStarts(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []Option
	}{{"http", nil}, {"tls", []Option{TLS()}}} {
		t.Run(tc.name, func(t *testing.T) {
			s := Start(t, tc.opts...)
			want := "http://127.0.0.1:"
			if tc.name == "tls" {
				want = "https://localhost:"
			}
			if !strings.HasPrefix(s.Endpoint(), want) {
				t.Fatalf("endpoint %s", s.Endpoint())
			}
			b := s.Bucket(t, "bkt")
			etag := s.Put(t, b, "a/b.txt", []byte("hello"))
			if etag == "" {
				t.Fatal("no ETag from a PUT")
			}
			ctx := context.Background()
			out, err := s.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: &b, Key: aws.String("a/b.txt")})
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(out.Body)
			out.Body.Close()
			if string(got) != "hello" || aws.ToString(out.ETag) != etag {
				t.Fatalf("got %q etag %s, want hello %s", got, aws.ToString(out.ETag), etag)
			}
			// An object is a plain file under DIR/BUCKET.
			if b, err := os.ReadFile(filepath.Join(s.Dir(), "bkt", "a", "b.txt")); err != nil || string(b) != "hello" {
				t.Fatalf("the object on disk: %q %v", b, err)
			}
			if _, err := s.Client().HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b, Key: aws.String("nope")}); !IsNotFound(err) {
				t.Fatalf("head of a missing key: %v", err)
			}
			env := strings.Join(s.Env(), "\n")
			for _, kv := range []string{"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true", "AWS_CONFIG_FILE=/dev/null",
				"AWS_SHARED_CREDENTIALS_FILE=/dev/null", "AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="} {
				if !strings.Contains(env, kv) {
					t.Fatalf("Env lacks %s:\n%s", kv, env)
				}
			}
			if tc.name == "tls" != strings.Contains(env, "SSL_CERT_FILE=") {
				t.Fatalf("SSL_CERT_FILE in Env: %s", env)
			}
		})
	}
}

// A file written into DIR/BUCKET is an object at once: listed, HEAD and
// GET; it has no ETag.
func TestS3SeedByFile(t *testing.T) {
	s := Start(t)
	b := s.Bucket(t, "seed")
	if err := os.MkdirAll(filepath.Join(s.Dir(), b, "d", "e"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.Dir(), b, "d", "e", "f.txt"), []byte("seeded"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	out, err := s.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &b})
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, o := range out.Contents {
		keys = append(keys, aws.ToString(o.Key))
	}
	if strings.Join(keys, ",") != "d/e/f.txt" {
		t.Fatalf("listed %q", keys)
	}
	get, err := s.Client().GetObject(ctx, &s3.GetObjectInput{Bucket: &b, Key: aws.String("d/e/f.txt")})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(get.Body)
	get.Body.Close()
	if string(data) != "seeded" {
		t.Fatalf("got %q", data)
	}
	t.Logf("a seeded file's ETag: %q (listed: %q)", aws.ToString(get.ETag), aws.ToString(out.Contents[0].ETag))
}
