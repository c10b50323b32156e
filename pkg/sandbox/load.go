package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/BurntSushi/toml"
)

// Env is what policy discovery reads from the process environment. Tests
// fill it by hand; the CLI fills it from the real process.
type Env struct {
	ConfigFlag string                      // --config, "" when absent
	Getenv     func(string) (string, bool) // os.LookupEnv
	Cwd        string                      // the current directory
	Home       string                      // the home directory ("" if unknown)
}

// Load finds and loads the policy in SPEC order: $FSBOX_CONFIG, --config,
// $XDG_CONFIG_HOME/fsbox/config.toml (or ~/.config/fsbox/config.toml), the
// built-in default. Errors are *Error with CodeConfig or CodeUsage.
func Load(env Env) (*Policy, error) {
	if env.Getenv == nil {
		env.Getenv = func(string) (string, bool) { return "", false }
	}
	fromEnv, hostFixed := env.Getenv("FSBOX_CONFIG")
	if hostFixed && env.ConfigFlag != "" {
		return nil, Errorf(CodeUsage, env.ConfigFlag, "--config is not allowed: FSBOX_CONFIG fixes the policy for this host")
	}
	var file string
	switch {
	case hostFixed:
		if fromEnv == "" {
			return nil, Errorf(CodeConfig, "", "FSBOX_CONFIG is set but empty")
		}
		file = fromEnv
	case env.ConfigFlag != "":
		file = env.ConfigFlag
	default:
		dir, ok := env.Getenv("XDG_CONFIG_HOME")
		if !ok || dir == "" || !filepath.IsAbs(dir) {
			dir = ""
			if env.Home != "" {
				dir = filepath.Join(env.Home, ".config")
			}
		}
		if dir != "" {
			cand := filepath.Join(dir, "fsbox", "config.toml")
			if _, err := os.Stat(cand); err == nil {
				file = cand
			}
		}
	}
	if file == "" {
		return DefaultPolicy(env.Cwd), nil
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(env.Cwd, file)
	}
	p, err := loadFile(file, env)
	if err != nil {
		return nil, err
	}
	// A policy the sandboxed side could have written is refused: by where
	// it really is, and by where the name that reached it is (a symlink
	// there could be re-pointed).
	if !hostFixed && (within(p.Source, canonical(env.Cwd)) || within(p.Link, canonical(env.Cwd))) {
		return nil, Errorf(CodeConfig, file, "the policy file lies inside the current directory, which the built-in default makes writable; keep policies outside the directories they open")
	}
	return p, nil
}

func loadFile(file string, env Env) (*Policy, error) {
	cfgErr := func(format string, args ...any) *Error {
		return Errorf(CodeConfig, file, "%s: %s", file, fmt.Sprintf(format, args...))
	}
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, cfgErr("policy file does not exist")
		}
		return nil, cfgErr("cannot read the policy file: %v", err)
	}
	p := newPolicy()
	md, err := toml.Decode(string(data), p)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return nil, cfgErr("line %d, column %d: %s", pe.Position.Line, pe.Position.Col, pe.Message)
		}
		return nil, cfgErr("%v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		k := und[0]
		return nil, cfgErr("line %d: unknown key %q", keyLine(string(data), k), k.String())
	}
	if md.IsDefined("deny_hardlinks") {
		p.Paths.DenyHardlinks = p.Paths.DenyHardlinks || p.DenyHardlinks
	}
	atLine := func(key ...string) string {
		return fmt.Sprintf("line %d: ", keyLine(string(data), toml.Key(key)))
	}
	if !md.IsDefined("workdir") {
		return nil, cfgErr("workdir is not set")
	}
	if p.Workdir, err = expandRoot(p.Workdir, env.Home, env.Getenv); err != nil {
		return nil, cfgErr("%sworkdir: %v", atLine("workdir"), err)
	}
	if err := isDir(p.Workdir); err != nil {
		return nil, cfgErr("%sworkdir %s: %v", atLine("workdir"), p.Workdir, err)
	}
	for i, r := range p.ReadRoots {
		if p.ReadRoots[i], err = expandRoot(r, env.Home, env.Getenv); err != nil {
			return nil, cfgErr("%sread_roots: %v", atLine("read_roots"), err)
		}
		if err := isDir(p.ReadRoots[i]); err != nil {
			return nil, cfgErr("%sread_roots: %s: %v", atLine("read_roots"), p.ReadRoots[i], err)
		}
	}
	if p.Audit.Log != "" {
		if p.Audit.Log, err = auditPath(p, env); err != nil {
			return nil, cfgErr("%s[audit] log: %v", atLine("audit", "log"), err)
		}
	}
	if err := p.validate(); err != nil {
		line := 0
		for _, k := range md.Keys() {
			if strings.Contains(err.Error(), k[len(k)-1]) {
				line = keyLine(string(data), k)
			}
		}
		if line > 0 {
			return nil, cfgErr("line %d: %v", line, err)
		}
		return nil, cfgErr("%v", err)
	}
	p.Source = canonical(file)
	p.Link = filepath.Join(canonical(filepath.Dir(file)), filepath.Base(file))
	return p, nil
}

// isDir reports why dir, a configured root, cannot serve as one.
func isDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("does not exist or cannot be resolved: %v", unwrapPathErr(err))
	case !fi.IsDir():
		return errors.New("is not a directory")
	}
	return nil
}

// keyLine finds the line that defines key k, for error messages: the line of
// its table header, or of `name =` inside that table. 0 if not found.
func keyLine(data string, k toml.Key) int {
	if len(k) == 0 {
		return 0
	}
	table := ""
	last := k[len(k)-1]
	keyRe := regexp.MustCompile(`^\s*["']?` + regexp.QuoteMeta(last) + `["']?\s*=`)
	want := strings.Join(k[:len(k)-1], ".")
	for i, line := range strings.Split(data, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") {
			table = strings.Trim(strings.SplitN(t, "]", 2)[0], "[ ")
			if table == k.String() {
				return i + 1
			}
			continue
		}
		if table == want && keyRe.MatchString(line) {
			return i + 1
		}
	}
	return 0
}

// canonical returns the absolute, symlink-free form of p, or its cleaned
// absolute form when it cannot be resolved.
func canonical(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real
	}
	return filepath.Clean(p)
}

// within reports whether p equals dir or lies below it, comparing whole
// path components.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	if dir == string(filepath.Separator) {
		return strings.HasPrefix(p, dir)
	}
	return strings.HasPrefix(p, dir+string(filepath.Separator))
}
