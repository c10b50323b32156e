//go:build unix

package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/fsbox/fsbox/internal/s3store"
	"github.com/fsbox/fsbox/internal/scripttest"
	"github.com/fsbox/fsbox/pkg/sandbox"
)

// TestMain makes the test binary double as fsbox-s3: fsbox
// (scripttest.Commands) with the S3 client registered, as cmd/fsbox-s3's
// main does.
func TestMain(m *testing.M) {
	sandbox.UseObjectStores(s3store.Open)
	testscript.Main(m, scripttest.Commands())
}
