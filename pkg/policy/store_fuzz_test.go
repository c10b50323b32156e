package policy

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzObjectURL: parsing an s3:// URL never panics; what it accepts
// prints back to a URL that parses to the same root, whose prefix has no
// empty, "." or ".." component and is valid UTF-8; a tenant value it
// accepts is one key component.
func FuzzObjectURL(f *testing.F) {
	for _, s := range []string{"s3://bkt", "s3://bkt/", "s3://bkt/a/b", "s3://bkt/a//b", "s3://bkt/../x",
		"s3://Bkt/x", "s3://b/x", "s3://bkt/a/./b", "s3://bkt/\xff", "s3://bkt/a\\b", "s3://bkt/a\x00b"} {
		f.Add(s, "alice")
	}
	f.Fuzz(func(t *testing.T, s, tenant string) {
		u, err := ParseObjectURL(s)
		if err == nil {
			back, err := ParseObjectURL(u.String())
			if err != nil || back != u {
				t.Fatalf("%q parsed to %+v, which prints as %q, which parses to %+v (%v)", s, u, u.String(), back, err)
			}
			if u.Prefix != "" {
				if !utf8.ValidString(u.Prefix) || strings.HasPrefix(u.Prefix, "/") || strings.HasSuffix(u.Prefix, "/") {
					t.Fatalf("prefix %q", u.Prefix)
				}
				for _, c := range strings.Split(u.Prefix, "/") {
					if c == "" || c == "." || c == ".." {
						t.Fatalf("prefix %q has the component %q", u.Prefix, c)
					}
				}
			}
		}
		if TenantValue("T", tenant) == nil {
			if tenant == "" || tenant == "." || tenant == ".." || strings.ContainsAny(tenant, "/\\\x00") || !utf8.ValidString(tenant) || len(tenant) > 255 {
				t.Fatalf("tenant value %q accepted", tenant)
			}
			u, err := ParseObjectURL("s3://bkt/" + tenant)
			if err != nil || u.Prefix != tenant {
				t.Fatalf("the tenant value %q makes the root %+v (%v)", tenant, u, err)
			}
		}
	})
}

// TestCheckEndpoint: https:// anywhere, plain http only on loopback.
func TestCheckEndpoint(t *testing.T) {
	for ep, ok := range map[string]bool{
		"https://s3.example.com": true, "http://127.0.0.1:9000": true, "http://[::1]:9000": true,
		"http://localhost:7070": true, "http://s3.example.com": false, "http://10.0.0.1": false,
		"ftp://127.0.0.1": false, "s3.example.com": false, "http://127.0.0.1.example.com": false,
	} {
		if got := CheckEndpoint(ep) == nil; got != ok {
			t.Errorf("CheckEndpoint(%q) ok = %v, want %v", ep, got, ok)
		}
	}
}
