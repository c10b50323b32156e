package policy

import "testing"

// The mount table's octal escapes, and a table that names /.
func TestReadMounts(t *testing.T) {
	for in, want := range map[string]string{
		`/a\040b`:          "/a b",
		`/tab\011x`:        "/tab\tx",
		`/nl\012`:          "/nl\n",
		`/back\134sl`:      `/back\sl`,
		`/plain`:           "/plain",
		`/short\04`:        `/short\04`,
		`/not\089oct`:      `/not\089oct`,
		`/end\`:            `/end\`,
		`\040\040`:         "  ",
		`/multi\040a\040b`: "/multi a b",
	} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
	ms := ReadMounts()
	root := false
	for _, m := range ms {
		if m.Point == "/" && m.Dev != "" && m.ID > 0 {
			root = true
		}
	}
	if !root {
		t.Errorf("ReadMounts: no mount at / among %d", len(ms))
	}
}
