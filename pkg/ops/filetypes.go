// File types by name, as ripgrep's -t/--type and -T/--type-not select
// them: each name stands for globs matched against a file's base name.

package ops

import (
	"path"
	"slices"
	"strings"

	"github.com/fsbox/fsbox/pkg/spec"
)

// fileTypes are ripgrep's default file types (rg --type-list) that people
// reach for most, under ripgrep's names and with its globs, so that
// `-t c` or `-T js` selects what it selects in rg. Globs are matched
// against the base name, case-sensitively (path.Match syntax: *, ?,
// [...]). Sorted by name: a table of constants, which the program starts
// with already built (a map would be built at every start, and its names
// sorted again for each option that lists them).
var fileTypes = []FileType{
	{"agda", []string{"*.agda", "*.lagda"}},
	{"asciidoc", []string{"*.adoc", "*.asc", "*.asciidoc"}},
	{"asm", []string{"*.S", "*.asm", "*.s"}},
	{"awk", []string{"*.awk"}},
	{"bazel", []string{"*.BUILD", "*.bazel", "*.bazelrc", "*.bzl", "BUILD", "WORKSPACE"}},
	{"c", []string{"*.[chH]", "*.[chH].in", "*.cats"}},
	{"clojure", []string{"*.clj", "*.cljc", "*.cljs", "*.cljx"}},
	{"cmake", []string{"*.cmake", "CMakeLists.txt"}},
	{"config", []string{"*.cfg", "*.conf", "*.config", "*.ini"}},
	{"cpp", []string{"*.[ChH]", "*.[ChH].in", "*.[ch]pp", "*.[ch]pp.in", "*.[ch]xx", "*.[ch]xx.in", "*.cc", "*.cc.in", "*.hh", "*.hh.in", "*.inl"}},
	{"cs", []string{"*.cs"}},
	{"css", []string{"*.css", "*.scss"}},
	{"csv", []string{"*.csv"}},
	{"cython", []string{"*.pxd", "*.pxi", "*.pyx"}},
	{"d", []string{"*.d"}},
	{"dart", []string{"*.dart"}},
	{"diff", []string{"*.diff", "*.patch"}},
	{"docker", []string{"*Dockerfile*"}},
	{"elisp", []string{"*.el"}},
	{"elixir", []string{"*.eex", "*.ex", "*.exs"}},
	{"erb", []string{"*.erb"}},
	{"erlang", []string{"*.erl", "*.hrl"}},
	{"fish", []string{"*.fish"}},
	{"fortran", []string{"*.F", "*.F77", "*.F90", "*.F95", "*.f", "*.f77", "*.f90", "*.f95", "*.pfo"}},
	{"go", []string{"*.go"}},
	{"gradle", []string{"*.gradle"}},
	{"groovy", []string{"*.gradle", "*.groovy"}},
	{"h", []string{"*.h", "*.hpp"}},
	{"haskell", []string{"*.c2hs", "*.cpphs", "*.hs", "*.hsc", "*.lhs"}},
	{"hs", []string{"*.hs", "*.lhs"}},
	{"html", []string{"*.ejs", "*.htm", "*.html"}},
	{"java", []string{"*.java", "*.jsp", "*.jspx", "*.properties"}},
	{"jinja", []string{"*.j2", "*.jinja", "*.jinja2"}},
	{"js", []string{"*.js", "*.jsx", "*.vue"}},
	{"json", []string{"*.json", "composer.lock"}},
	{"jsonl", []string{"*.jsonl"}},
	{"julia", []string{"*.jl"}},
	{"jupyter", []string{"*.ipynb", "*.jpynb"}},
	{"kotlin", []string{"*.kt", "*.kts"}},
	{"less", []string{"*.less"}},
	{"license", []string{"*[.-]LICEN[CS]E*", "AGPL-*[0-9]*", "APACHE-*[0-9]*", "BSD-*[0-9]*", "CC-BY-*", "COPYING", "COPYING[.-]*", "COPYRIGHT", "COPYRIGHT[.-]*", "EULA", "EULA[.-]*", "GFDL-*[0-9]*", "GNU-*[0-9]*", "GPL-*[0-9]*", "LGPL-*[0-9]*", "LICEN[CS]E", "LICEN[CS]E[.-]*", "MIT-*[0-9]*", "MPL-*[0-9]*", "NOTICE", "NOTICE[.-]*", "OFL-*[0-9]*", "PATENTS", "PATENTS[.-]*", "UNLICEN[CS]E", "UNLICEN[CS]E[.-]*", "agpl[.-]*", "gpl[.-]*", "lgpl[.-]*", "licen[cs]e", "licen[cs]e.*"}},
	{"lisp", []string{"*.el", "*.jl", "*.lisp", "*.lsp", "*.sc", "*.scm"}},
	{"lock", []string{"*.lock", "package-lock.json"}},
	{"log", []string{"*.log"}},
	{"lua", []string{"*.lua"}},
	{"m4", []string{"*.ac", "*.m4"}},
	{"make", []string{"*.mak", "*.mk", "[Gg][Nn][Uu]makefile", "[Gg][Nn][Uu]makefile.am", "[Gg][Nn][Uu]makefile.in", "[Mm]akefile", "[Mm]akefile.am", "[Mm]akefile.in"}},
	{"man", []string{"*.[0-9][cEFMmpSx]", "*.[0-9lnpx]"}},
	{"markdown", []string{"*.markdown", "*.md", "*.mdown", "*.mkdn"}},
	{"matlab", []string{"*.m"}},
	{"md", []string{"*.markdown", "*.md", "*.mdown", "*.mkdn"}},
	{"meson", []string{"meson.build", "meson_options.txt"}},
	{"minified", []string{"*.min.css", "*.min.html", "*.min.js"}},
	{"nim", []string{"*.nim", "*.nimble", "*.nimf", "*.nims"}},
	{"nix", []string{"*.nix"}},
	{"objc", []string{"*.h", "*.m"}},
	{"objcpp", []string{"*.h", "*.mm"}},
	{"ocaml", []string{"*.ml", "*.mli", "*.mll", "*.mly"}},
	{"pascal", []string{"*.dpr", "*.inc", "*.lpr", "*.pas", "*.pp"}},
	{"perl", []string{"*.PL", "*.perl", "*.pl", "*.plh", "*.plx", "*.pm", "*.t"}},
	{"php", []string{"*.php", "*.php3", "*.php4", "*.php5", "*.phtml"}},
	{"po", []string{"*.po"}},
	{"protobuf", []string{"*.proto"}},
	{"ps", []string{"*.cdxml", "*.ps1", "*.ps1xml", "*.psd1", "*.psm1"}},
	{"py", []string{"*.py"}},
	{"r", []string{"*.R", "*.Rmd", "*.Rnw", "*.r"}},
	{"readme", []string{"*README", "README*"}},
	{"rst", []string{"*.rst"}},
	{"ruby", []string{"*.gemspec", "*.rb", "*.rbw", ".irbrc", "Gemfile", "Rakefile", "config.ru"}},
	{"rust", []string{"*.rs"}},
	{"sass", []string{"*.sass", "*.scss"}},
	{"scala", []string{"*.sbt", "*.scala"}},
	{"sh", []string{"*.bash", "*.bashrc", "*.csh", "*.cshrc", "*.ksh", "*.kshrc", "*.sh", "*.tcsh", "*.zsh", ".bash_login", ".bash_logout", ".bash_profile", ".bashrc", ".cshrc", ".kshrc", ".login", ".logout", ".profile", ".tcshrc", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "bash_login", "bash_logout", "bash_profile", "bashrc", "profile", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"}},
	{"sql", []string{"*.psql", "*.sql"}},
	{"svg", []string{"*.svg"}},
	{"swift", []string{"*.swift"}},
	{"systemd", []string{"*.automount", "*.conf", "*.device", "*.link", "*.mount", "*.path", "*.scope", "*.service", "*.slice", "*.socket", "*.swap", "*.target", "*.timer"}},
	{"tcl", []string{"*.tcl"}},
	{"tex", []string{"*.bib", "*.cls", "*.dtx", "*.ins", "*.ltx", "*.sty", "*.tex"}},
	{"tf", []string{"*.tf"}},
	{"toml", []string{"*.toml", "Cargo.lock"}},
	{"ts", []string{"*.ts", "*.tsx"}},
	{"txt", []string{"*.txt"}},
	{"vala", []string{"*.vala"}},
	{"vb", []string{"*.vb"}},
	{"verilog", []string{"*.sv", "*.svh", "*.v", "*.vh"}},
	{"vhdl", []string{"*.vhd", "*.vhdl"}},
	{"vim", []string{"*.vim"}},
	{"xml", []string{"*.dtd", "*.rng", "*.sch", "*.xhtml", "*.xjb", "*.xml", "*.xml.dist", "*.xsd", "*.xsl", "*.xslt"}},
	{"yacc", []string{"*.y"}},
	{"yaml", []string{"*.yaml", "*.yml"}},
	{"zig", []string{"*.zig"}},
	{"zsh", []string{"*.zsh", ".zlogin", ".zlogout", ".zprofile", ".zshenv", ".zshrc", "zlogin", "zlogout", "zprofile", "zshenv", "zshrc"}},
}

// typeSet matches base names against the globs of some file types: a
// literal name or a literal suffix ("*.c", "*.xml.dist") is looked up,
// the rest matched one by one.
type typeSet struct {
	names    map[string]bool
	suffixes map[string][]string // by the suffix's own extension (".c", ".dist")
	globs    []string
}

func (s *typeSet) add(glob string) {
	glob = goGlob(glob)
	rest, star := strings.CutPrefix(glob, "*")
	switch {
	case !star && !strings.ContainsAny(glob, `*?[\`):
		if s.names == nil {
			s.names = map[string]bool{}
		}
		s.names[glob] = true
	case star && strings.HasPrefix(rest, ".") && !strings.ContainsAny(rest, `*?[\`):
		if s.suffixes == nil {
			s.suffixes = map[string][]string{}
		}
		ext := path.Ext(rest)
		if !slices.Contains(s.suffixes[ext], rest) {
			s.suffixes[ext] = append(s.suffixes[ext], rest)
		}
	default:
		if !slices.Contains(s.globs, glob) {
			s.globs = append(s.globs, glob)
		}
	}
}

// goGlob is an rg glob in path.Match's syntax: a '-' that ends a class
// ("[.-]") is a literal there, and must be escaped here.
func goGlob(g string) string { return strings.ReplaceAll(g, "-]", `\-]`) }

// match reports whether a base name matches one of the set's globs.
func (s *typeSet) match(name string) bool {
	if s.names[name] {
		return true
	}
	if ext := path.Ext(name); ext != "" {
		for _, suf := range s.suffixes[ext] {
			if strings.HasSuffix(name, suf) {
				return true
			}
		}
	}
	for _, g := range s.globs {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// typeFilter selects walked files by type name: with -t (want), a file
// must match one of the types named; with -T (not), it must match none.
// A file named on the command line is searched whatever its type, as rg
// searches it.
type typeFilter struct {
	want, not *typeSet // nil: not given
}

// newTypeFilter builds the filter for -t and -T; an unknown name is
// usage, with the nearest known name.
func newTypeFilter(want, not []string) (typeFilter, error) {
	var f typeFilter
	var err error
	if f.want, err = typeSetOf(want, "type", nil); err != nil {
		return f, err
	}
	f.not, err = typeSetOf(not, "type-not", nil)
	return f, err
}

// typeSetOf is the set of the types named; kinds are other names the
// flag takes (find's f, d, l), for the error's did-you-mean.
func typeSetOf(names []string, flag string, kinds []string) (*typeSet, error) {
	if len(names) == 0 {
		return nil, nil
	}
	s := &typeSet{}
	for _, n := range names {
		globs, ok := fileTypeGlobs(n)
		if !ok {
			return nil, unknownType(n, flag, kinds)
		}
		for _, g := range globs {
			s.add(g)
		}
	}
	return s, nil
}

// unknownType is the usage error for a type name rg does not define
// here, with the nearest one (none for a one-letter name: every letter
// is near another).
func unknownType(name, flag string, kinds []string) error {
	what := "a file type"
	if len(kinds) > 0 {
		what = strings.Join(kinds, ", ") + " or a file type"
	}
	hint := " (--type-list lists the file types)"
	if best := spec.Nearest(name, append(slices.Clone(kinds), typeNames()...)); best != "" && len(name) > 1 {
		hint = "; did you mean " + best + "?" + hint
	}
	return usageErr("%s %q is not %s%s", flag, name, what, hint)
}

// on reports whether the filter selects anything (-t or -T given).
func (f typeFilter) on() bool { return f.want != nil || f.not != nil }

// keep reports whether a file of this base name passes -t and -T.
func (f typeFilter) keep(name string) bool {
	return (f.want == nil || f.want.match(name)) && (f.not == nil || !f.not.match(name))
}

// findTypes is find's -t and -T: entry kinds as fd's -t names them (f,
// d, l) and rg's file type names, which select files (any entry but a
// directory) by name. -t keeps an entry of one of the kinds given (when
// any is) and of one of the types given (when any is); -T leaves out an
// entry of a kind or a type given.
type findTypes struct {
	kinds, notKinds map[string]bool // "file", "dir", "symlink"
	names           typeFilter
}

// findKind is the entry kind (file, dir, symlink) a value of find's -t
// names, as fd spells them.
func findKind(v string) (kind string, ok bool) {
	switch v {
	case "f", "file":
		return "file", true
	case "d", "dir", "directory":
		return "dir", true
	case "l", "symlink":
		return "symlink", true
	}
	return "", false
}

// findTypeWords are the values find's -t and -T take, for completion:
// the kinds, then the type names (d, the D language's, is the kind).
func findTypeWords() []string {
	words := []string{"f", "d", "l"}
	for _, n := range typeNames() {
		if _, kind := findKind(n); !kind {
			words = append(words, n)
		}
	}
	return words
}

func newFindTypes(want, not []string) (findTypes, error) {
	var f findTypes
	split := func(vals []string, kinds *map[string]bool) (names []string) {
		for _, v := range vals {
			if k, ok := findKind(v); ok {
				if *kinds == nil {
					*kinds = map[string]bool{}
				}
				(*kinds)[k] = true
			} else {
				names = append(names, v)
			}
		}
		return names
	}
	wantNames, notNames := split(want, &f.kinds), split(not, &f.notKinds)
	kinds := []string{"f", "d", "l"}
	var err error
	if f.names.want, err = typeSetOf(wantNames, "type", kinds); err != nil {
		return f, err
	}
	f.names.not, err = typeSetOf(notNames, "type-not", kinds)
	return f, err
}

// keep reports whether an entry of this kind (file, dir, symlink, other)
// and base name passes -t and -T.
func (f findTypes) keep(kind, name string) bool {
	switch {
	case f.kinds != nil && !f.kinds[kind], f.notKinds[kind]:
		return false
	case kind == "dir":
		return f.names.want == nil // a type name selects files
	}
	return f.names.keep(name)
}

// fileTypeGlobs are the globs of the file type called name.
func fileTypeGlobs(name string) ([]string, bool) {
	i, ok := slices.BinarySearchFunc(fileTypes, name, func(t FileType, name string) int { return strings.Compare(t.Name, name) })
	if !ok {
		return nil, false
	}
	return fileTypes[i].Globs, true
}

// typeNames are the file types' names, sorted.
func typeNames() []string {
	names := make([]string, len(fileTypes))
	for i, t := range fileTypes {
		names[i] = t.Name
	}
	return names
}

// FileType is one file type of --type-list: its name and its globs.
type FileType struct {
	Name  string   `json:"name"`
	Globs []string `json:"globs"`
}

// TypeListResult is --type-list's answer: every file type -t and -T
// take, by name.
type TypeListResult struct {
	Types []FileType `json:"types"`
}

// TypeList lists the file types, sorted by name.
func TypeList() TypeListResult {
	var r TypeListResult
	for _, t := range fileTypes {
		r.Types = append(r.Types, FileType{Name: t.Name, Globs: slices.Clone(t.Globs)})
	}
	return r
}

// Outcome: a whole result.
func (r TypeListResult) Outcome() spec.Outcome { return spec.Outcome{} }

// Text prints a type a line as rg --type-list does: "name: glob, glob".
func (r TypeListResult) Text(w spec.TextWriter) error {
	for _, t := range r.Types {
		w.WriteString(t.Name + ": " + strings.Join(t.Globs, ", "))
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}
