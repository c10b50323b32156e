package cli

import (
	"bufio"
	"encoding/json"
	"io"

	ucli "github.com/urfave/cli/v2"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	register(&command{
		name:      "edit",
		usage:     "replace exact text in a file (atomic; CRLF, BOM and mode kept)",
		argsUsage: "PATH",
		minArgs:   1, maxArgs: 1,
		flags: []ucli.Flag{
			&ucli.StringFlag{Name: "old", Usage: "the exact text to replace"},
			&ucli.StringFlag{Name: "new", Usage: "the text to put in its place"},
			&ucli.StringFlag{Name: "old-file", Usage: "read the old text from this file", TakesFile: true},
			&ucli.StringFlag{Name: "new-file", Usage: "read the new text from this file", TakesFile: true},
			&ucli.StringFlag{Name: "edits-json", Usage: `several edits, each matched against the original text, not overlapping, applied together, all or nothing: [{"old":…,"new":…,"all":false}]`},
			&ucli.BoolFlag{Name: "all", Usage: "replace every occurrence"},
			&ucli.BoolFlag{Name: "dry-run", Usage: "show the diff, change nothing"},
			&ucli.StringFlag{Name: "expect-sha256", Usage: "refuse (conflict) unless the current content has this SHA-256"},
		},
		run: func(x *call) error {
			c := x.ctx
			o := ops.EditOptions{Path: x.args[0], DryRun: c.Bool("dry-run"), ExpectSHA256: c.String("expect-sha256")}
			if c.IsSet("edits-json") {
				if c.IsSet("old") || c.IsSet("new") || c.IsSet("old-file") || c.IsSet("new-file") {
					return usageErr("--edits-json does not go with --old/--new")
				}
				if err := json.Unmarshal([]byte(c.String("edits-json")), &o.Edits); err != nil {
					return usageErr("--edits-json: %v", err)
				}
			} else {
				old, err := textArg(x, "old")
				if err != nil {
					return err
				}
				new, err := textArg(x, "new")
				if err != nil {
					return err
				}
				if (!c.IsSet("old") && !c.IsSet("old-file")) || (!c.IsSet("new") && !c.IsSet("new-file")) {
					return usageErr("edit needs --old (or --old-file) and --new (or --new-file; --new '' deletes), or --edits-json")
				}
				o.Edits = []ops.EditSpec{{Old: old, New: new, All: c.Bool("all")}}
			}
			r, err := ops.Edit(x.sb, o)
			if err != nil {
				return err
			}
			if x.out.format != formatText {
				return x.out.emitWithString(&r, &r.Diff) // a diff can be tens of MiB
			}
			return x.out.emit(r, nil, nil, func(w *bufio.Writer) error {
				_, err := w.WriteString(r.Diff)
				return err
			})
		},
	})
}

// textArg reads --NAME, or the file --NAME-file names (through the sandbox).
func textArg(x *call, name string) (string, error) {
	c := x.ctx
	if c.IsSet(name) && c.IsSet(name+"-file") {
		return "", usageErr("give --%s or --%s-file, not both", name, name)
	}
	if !c.IsSet(name + "-file") {
		return c.String(name), nil
	}
	f, err := x.sb.Open(c.String(name + "-file"))
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, x.sb.Limits().MaxWriteBytes))
	return string(b), err
}
