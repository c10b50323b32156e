package s3store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/fsbox/fsbox/pkg/policy"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestS3Probe runs the probes on versitygw: every probe answers, in
// order; what versitygw v1.8.0 is known to give and not give comes out
// so; every key written lies under the scratch and is one of ProbeKeys;
// and the outside requests reach (the server's root credentials reach
// the whole bucket).
func TestS3Probe(t *testing.T) {
	srv, s := openServer(t, "tenant")
	ctx := context.Background()
	srv.Put(t, "bkt", "other/keep.txt", []byte("not the tenant's"))
	scratch := "sub/.fsbox-store-check-test/"
	start := time.Now()
	res, err := s.ProbeStore(ctx, scratch)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	var names []string
	got := map[string]sandbox.ProbeResult{}
	for _, r := range res {
		names = append(names, r.Name)
		got[r.Name] = r
		t.Logf("%-28s %-5v %s", r.Name, r.OK, r.Detail)
		if r.Detail == "" {
			t.Errorf("%s: no detail", r.Name)
		}
	}
	if !slices.Equal(names, ProbeNames) {
		t.Fatalf("probes %v, want %v", names, ProbeNames)
	}
	if took > 10*time.Second {
		t.Errorf("the probes took %v", took)
	}
	// What versitygw v1.8.0 gives, and what it does not.
	for _, n := range []string{ProbeCondPutIfNoneMatchRace, ProbeCondPutIfMatchRace, ProbeCondGet, ProbeSuffixRange,
		ProbeVerifiedSHA256, ProbeListDelimiterAfter, ProbeNoTornReads} {
		if !got[n].OK {
			t.Errorf("%s: versitygw gives it, the probe says not: %s", n, got[n].Detail)
		}
	}
	if got[ProbeCopyDestConditions].OK {
		t.Errorf("%s: versitygw v1.8.0 ignores a copy's destination conditions, the probe says it honours them: %s",
			ProbeCopyDestConditions, got[ProbeCopyDestConditions].Detail)
	}

	// Every key written is under the scratch, and one the sandbox
	// checked (ProbeKeys).
	keys := s.ProbeKeys()
	out, err := srv.Client().ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: aws.String("bkt")})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out.Contents {
		k := aws.ToString(o.Key)
		if k == "other/keep.txt" {
			continue
		}
		rel, ok := strings.CutPrefix(k, "tenant/"+scratch)
		if !ok || !slices.Contains(keys, rel) {
			t.Errorf("a key written outside the scratch, or not named by ProbeKeys: %s", k)
		}
	}

	// Outside: the root credentials reach the bucket and the account.
	o := s.ProbeOutside(ctx, []policy.ObjectURL{{Bucket: "bkt", Prefix: "tenant"}})
	t.Logf("outside: %+v", o)
	if !o.Reaches || len(o.Requests) != 3 {
		t.Fatalf("outside: %+v", o)
	}
	for _, q := range o.Requests {
		if !q.Reaches {
			t.Errorf("%s %s: %s, want it to reach", q.Request, q.Target, q.Answer)
		}
	}
	// A root that is the whole bucket leaves only the account outside.
	o = s.ProbeOutside(ctx, []policy.ObjectURL{{Bucket: "bkt"}})
	if len(o.Requests) != 1 || o.Requests[0].Request != "list_buckets" {
		t.Errorf("outside a whole-bucket root: %+v", o)
	}
}

// TestS3ProbeStopsAtTheCap: the probes count against [store]
// max_requests, and stop at it with its error.
func TestS3ProbeStopsAtTheCap(t *testing.T) {
	_, s := openServer(t, "tenant")
	ctx := sandbox.WithRequestCap(context.Background(), 20)
	t0 := time.Now()
	res, err := s.ProbeStore(ctx, ".fsbox-store-check-cap/")
	t.Logf("took %v", time.Since(t0))
	if err == nil || !sandbox.MaxRequestsCut(ctx) {
		t.Fatalf("probes under a cap of 20: %v, %v", res, err)
	}
	if len(res) >= len(ProbeNames) {
		t.Errorf("every probe ran under a cap of 20: %v", res)
	}
}
