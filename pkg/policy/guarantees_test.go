package policy

import (
	"strings"
	"testing"
)

func TestCheckRequire(t *testing.T) {
	all := Guarantees{DescriptorPathCheck: true, DirLock: true, NoFollow: true, NoReplaceRename: true}
	for _, c := range []struct {
		name    string
		require []string
		have    Guarantees
		want    string // a part of the error; "" for none
	}{
		{"all held", GuaranteeNames(), all, ""},
		{"none held, all required", GuaranteeNames(), Guarantees{}, "does not give descriptor_path_check, dir_lock, no_follow, no_replace_rename"},
		{"none held, none required", []string{}, Guarantees{}, ""},
		{"one missing", GuaranteeNames(), Guarantees{DescriptorPathCheck: true, DirLock: true, NoFollow: true}, "does not give no_replace_rename,"},
		{"the missing one not required", []string{"dir_lock", "no_follow"}, Guarantees{DirLock: true, NoFollow: true}, ""},
		{"named twice", []string{"dir_lock", "dir_lock"}, Guarantees{}, "does not give dir_lock,"},
		{"unknown", []string{"landlock"}, all, `unknown guarantee "landlock"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := checkRequire(c.require, c.have)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}
