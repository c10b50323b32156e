package ops

import (
	"regexp"
	"testing"
)

// TestUnicodeClasses: \w \d \s (and their negations, in brackets or out)
// match as Unicode's classes, as rg's do; [[:word:]]-style classes, \Q
// runs and other escapes are left as they are.
func TestUnicodeClasses(t *testing.T) {
	for _, c := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{`^\w+$`, []string{"héllo", "Ωμέγα", "x_1", "日本語", "é"}, []string{"a b", "a-b", "€"}},
		{`^\W+$`, []string{" -+", "€", "\u00a0"}, []string{"é", "a"}},
		{`^\d+$`, []string{"0123", "٣٤", "१२"}, []string{"½", "a"}},
		{`^\D+$`, []string{"ab", "½"}, []string{"٣"}},
		{`^a\sb$`, []string{"a b", "a\u00a0b", "a\u3000b", "a\u2028b"}, []string{"ab", "a_b"}},
		{`^a\Sb$`, []string{"a_b", "aéb"}, []string{"a b", "a\u00a0b"}},
		{`^[\w-]+$`, []string{"é-x"}, []string{"é x"}},
		{`^[^\W]+$`, []string{"éx"}, []string{"é-"}},
		{`^[\S]+$`, []string{"é-x"}, []string{"é\u00a0x"}},
		{`^[^\s\d]+$`, []string{"éx-"}, []string{"é٣", "a b"}},
		{`^[[:word:]]+$`, []string{"ab_1"}, []string{"é"}},
		{`^\Q\w\E$`, []string{`\w`}, []string{"a"}},
		{`^[]\w]+$`, []string{"]é"}, []string{"-"}},
		{`^\\w$`, []string{`\w`}, []string{"é"}},
		{`^\x{e9}\p{Greek}$`, []string{"éα"}, []string{"éa"}},
	} {
		re, err := regexp.Compile(unicodeClasses(c.pattern))
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		for _, s := range c.match {
			if !re.MatchString(s) {
				t.Errorf("%s (as %s) does not match %q", c.pattern, unicodeClasses(c.pattern), s)
			}
		}
		for _, s := range c.miss {
			if re.MatchString(s) {
				t.Errorf("%s matches %q", c.pattern, s)
			}
		}
	}
	// An invalid pattern stays invalid.
	for _, p := range []string{`[a-\w]`, `\w{2000}`, `(\d`, `[\s`} {
		if _, err := regexp.Compile(unicodeClasses(p)); err == nil {
			t.Errorf("%s compiles as %s", p, unicodeClasses(p))
		}
	}
}
