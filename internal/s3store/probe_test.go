package s3store

import (
	"context"
	"strings"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// TestProbeKeysRefusedFirst: a scratch whose keys S3 would not take as
// given (over 1,024 bytes with the prefix) is usage before any request.
func TestProbeKeysRefusedFirst(t *testing.T) {
	s := &store{bucket: "bkt", prefix: "tenant/"} // no client: a request would panic
	long := strings.Repeat("d/", 500) + ".fsbox-store-check-x/"
	if _, err := s.ProbeStore(context.Background(), long); fserr.AsError(err).Code != fserr.CodeUsage {
		t.Errorf("a scratch too long for its keys: %v, want usage", err)
	}
	if _, err := s.ProbeStore(context.Background(), "no-slash"); err == nil {
		t.Error("a scratch without its slash: no error")
	}
}
