package cli

import (
	"bufio"
	"fmt"
	"strings"

	"github.com/fsbox/fsbox/pkg/ops"
)

func init() {
	runners["roots"] = func(x *call) error {
		return runText(x, func(r ops.RootsResult, w *bufio.Writer) error {
			name := x.out.safeName // paths are names: one a line
			fmt.Fprintf(w, "workdir\t%s\n", name(r.Workdir))
			for _, d := range r.WriteRoots {
				fmt.Fprintf(w, "write_root\t%s\n", name(d))
			}
			for _, d := range r.ReadRoots {
				fmt.Fprintf(w, "read_root\t%s\n", name(d))
			}
			cfg := "(built-in default)"
			if r.Config != nil {
				cfg = name(*r.Config)
			}
			fmt.Fprintf(w, "config\t%s\n", cfg)
			if r.AuditLog != nil {
				fmt.Fprintf(w, "audit_log\t%s\n", name(*r.AuditLog))
			}
			fmt.Fprintf(w, "commands\t%s\n", strings.Join(r.Commands, " "))
			fmt.Fprintf(w, "landlock\t%s (enforced: %v)\n", r.Landlock.Mode, r.Landlock.Enforced)
			g := r.Guarantees
			fmt.Fprintf(w, "guarantees\tdescriptor_path_check=%v dir_lock=%v no_follow=%v no_replace_rename=%v\n",
				g.DescriptorPathCheck, g.DirLock, g.NoFollow, g.NoReplaceRename)
			fmt.Fprintf(w, "require\t%s\n", strings.Join(r.Require, " "))
			if r.Journal.Enabled {
				fmt.Fprintf(w, "journal\t%s\n", name(r.Journal.Dir))
				for _, jr := range r.Journal.Roots {
					fmt.Fprintf(w, "journal_root\t%s\t%s\n", name(jr.Root), name(jr.Dir))
				}
				for _, is := range r.Journal.Ignored {
					fmt.Fprintf(w, "journal_ignored\t%s\t%s\n", name(is.Dir), is.Reason)
				}
				if r.Journal.RecoveryPending > 0 {
					fmt.Fprintf(w, "recovery_pending\t%d\n", r.Journal.RecoveryPending)
				}
			} else {
				fmt.Fprintf(w, "journal\toff: %s\n", r.Journal.Reason)
			}
			return nil
		})
	}
}
