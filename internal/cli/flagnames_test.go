package cli

import (
	"slices"
	"testing"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

// TestWithNames: a parser flag answers Names as urfave's own flag does,
// and is every kind of flag urfave asks it to be (help, actions, required,
// visibility, categories), as the flag it wraps is.
func TestWithNames(t *testing.T) {
	all := [][]ucli.Flag{globalFlags(), {&ucli.StringFlag{Name: "x", Aliases: []string{"y", "z"}}, &ucli.Int64Flag{Name: "n"}}}
	for _, op := range ops.Registry.Ops() {
		all = append(all, cliFlags(op))
	}
	for _, fs := range all {
		for i, w := range withNames(fs) {
			f := fs[i]
			if got, want := w.Names(), f.Names(); !slices.Equal(got, want) {
				t.Errorf("%T %s: Names %q, want %q", f, want[0], got, want)
			}
			for _, c := range []struct {
				kind string
				is   func(ucli.Flag) bool
			}{
				{"DocGenerationFlag", func(f ucli.Flag) bool { _, ok := f.(ucli.DocGenerationFlag); return ok }},
				{"ActionableFlag", func(f ucli.Flag) bool { _, ok := f.(ucli.ActionableFlag); return ok }},
				{"RequiredFlag", func(f ucli.Flag) bool { _, ok := f.(ucli.RequiredFlag); return ok }},
				{"VisibleFlag", func(f ucli.Flag) bool { _, ok := f.(ucli.VisibleFlag); return ok }},
				{"CategorizableFlag", func(f ucli.Flag) bool { _, ok := f.(ucli.CategorizableFlag); return ok }},
				{"DocGenerationSliceFlag", func(f ucli.Flag) bool { _, ok := f.(ucli.DocGenerationSliceFlag); return ok }},
			} {
				if c.is(w) != c.is(f) {
					t.Errorf("%T %s: %s %v, wrapped %v", f, f.Names()[0], c.kind, c.is(f), c.is(w))
				}
			}
		}
	}
}

// TestWithNamesParses: the wrapped flags parse as urfave's own: values,
// aliases, IsSet, defaults and the environment.
func TestWithNamesParses(t *testing.T) {
	t.Setenv("FSBOX_TEST_WITHNAMES", "from-env")
	flags := func() []ucli.Flag {
		return []ucli.Flag{
			&ucli.StringFlag{Name: "s", Aliases: []string{"str"}},
			&ucli.StringFlag{Name: "d", Value: "dflt"},
			&ucli.StringFlag{Name: "e", EnvVars: []string{"FSBOX_TEST_WITHNAMES"}},
			&ucli.BoolFlag{Name: "b"},
			&ucli.BoolFlag{Name: "off"},
			&ucli.Int64Flag{Name: "n"},
			&ucli.StringSliceFlag{Name: "m"},
		}
	}
	type seen struct {
		s, d, e            string
		b, off             bool
		n                  int64
		m                  []string
		setS, setOff, setE bool
	}
	run := func(fs []ucli.Flag) seen {
		var got seen
		app := &ucli.App{Name: "t", Flags: fs, DisableSliceFlagSeparator: true, Action: func(c *ucli.Context) error {
			got = seen{c.String("s"), c.String("d"), c.String("e"), c.Bool("b"), c.Bool("off"), c.Int64("n"), c.StringSlice("m"),
				c.IsSet("s"), c.IsSet("off"), c.IsSet("e")}
			return nil
		}}
		if err := app.Run([]string{"t", "--str", "v", "-b", "--n", "7", "--m", "a,b", "--m", "c"}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	plain, wrapped := run(flags()), run(withNames(flags()))
	if !slices.Equal(plain.m, wrapped.m) || plain.s != wrapped.s || plain.d != wrapped.d || plain.e != wrapped.e || plain.b != wrapped.b ||
		plain.off != wrapped.off || plain.n != wrapped.n || plain.setS != wrapped.setS || plain.setOff != wrapped.setOff || plain.setE != wrapped.setE {
		t.Errorf("wrapped flags parse as %+v, urfave's as %+v", wrapped, plain)
	}
	if wrapped.s != "v" || wrapped.d != "dflt" || wrapped.e != "from-env" || !wrapped.b || wrapped.n != 7 || !slices.Equal(wrapped.m, []string{"a,b", "c"}) || !wrapped.setS || wrapped.setOff || !wrapped.setE {
		t.Errorf("parsed %+v", wrapped)
	}
}
