//go:build unix

package main

import (
	"maps"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNearestVersion(t *testing.T) {
	vs := []string{"0.6.2", "2025.12.18", "2026.1.14", "2026.7.10", "2026.9.1-rc.1", "2026.10.2"}
	for _, c := range []struct{ want, got string }{
		{"2026.7.10", "2026.7.10"},
		{"2026.8.31", "2026.7.10"}, // the nearest earlier release
		{"2026.1.2", "2025.12.18"}, // numbers, not strings
		{"0.1.0", ""},
	} {
		if got := nearestVersion(vs, c.want); got != c.got {
			t.Errorf("nearestVersion(%s) = %q, want %q", c.want, got, c.got)
		}
	}
}

func TestMountType(t *testing.T) {
	mounts := `/dev/sda1 / ext4 rw,relatime 0 0
tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0
/dev/sdb1 /dev/shm/big ext4 rw 0 0
/dev/sdc1 /mnt/my\040disk xfs rw 0 0
`
	for _, c := range []struct{ path, want string }{
		{"/dev/shm", "tmpfs"},
		{"/dev/shm/x/work", "tmpfs"},
		{"/dev/shm/big/x", "ext4"}, // the longest mount point
		{"/dev/shmx", "ext4"},      // a prefix of the name is not a parent
		{"/mnt/my disk/a", "xfs"},
		{"/home", "ext4"},
	} {
		if got := mountType(mounts, c.path); got != c.want {
			t.Errorf("mountType(%s) = %q, want %q", c.path, got, c.want)
		}
	}
	if got := mountType("", "/dev/shm"); got != "" {
		t.Errorf("mountType of an empty table = %q", got)
	}
}

// Every per-call row has a ratio target, and the tmpfs row times the
// edit calls of mcp-edit.
func TestMCPRows(t *testing.T) {
	side := fsboxMCPSide("fsbox", "fsbox", "/w", nil, mcpEditFile)
	for _, op := range side.ops {
		if mcpRatioTargets[op.row] == 0 {
			t.Errorf("%s has no ratio target", op.row)
		}
	}
	e := editOnly(side, mcpTmpfsRow)
	if len(e.ops) != 1 || e.ops[0].row != mcpTmpfsRow || e.mixed != nil {
		t.Fatalf("editOnly: %d ops, first %q", len(e.ops), e.ops[0].row)
	}
	if tool, _ := e.ops[0].args(0); tool != "fsbox_edit" {
		t.Errorf("editOnly's call is %s", tool)
	}
	if !slices.Contains(mcpRowNames, mcpTmpfsRow) || mcpRatioTargets[mcpTmpfsRow] == 0 {
		t.Errorf("%s is not a row with a target", mcpTmpfsRow)
	}
}

// fakeMCP is a JSON-RPC server in sh (builtins only, for speed): it
// answers every request, whose id the client writes first, with an empty
// result (an empty tool result too).
const fakeMCP = `while IFS= read -r line; do
  case $line in '{"id":'*)
    id=${line#'{"id":'}
    printf '{"jsonrpc":"2.0","id":%s,"result":{"content":[]}}\n' "${id%%,*}";;
  esac
done`

// A side that fails is left out and the others run again; fsbox's
// failure is the run's.
func TestMCPFallback(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	side := func(name, script, edit string) mcpSide {
		s := fsboxMCPSide(name, sh, "", nil, edit)
		s.argv = []string{"sh", "-c", script}
		return s
	}
	good := func(name, edit string) mcpSide { return side(name, fakeMCP, edit) }
	bad := func(name, edit string) mcpSide { return side(name, "echo broken >&2; exit 3", edit) }
	work := t.TempDir()
	want := map[string]bool{"mcp-stat": true}

	run, err := runMCPFallback([]mcpSide{good("fsbox", mcpEditFile), bad("baseline", mcpEditBase), good("peer", mcpEditPeer)},
		work, []byte("EDIT_MARKER_ALPHA\n"), 10*time.Second, want)
	if err != nil {
		t.Fatal(err)
	}
	if why := run.dropped["baseline"]; !strings.Contains(why, "broken") {
		t.Errorf("the baseline was dropped because %q, want its stderr", why)
	}
	if run.dropped["peer"] != "" || run.rs["baseline"] != nil {
		t.Errorf("dropped %v, figures for %v", run.dropped, slices.Collect(maps.Keys(run.rs)))
	}
	for _, name := range []string{"fsbox", "peer"} {
		if r := run.rs[name]; r == nil || len(r.calls["mcp-stat"]) != mcpCalls {
			t.Errorf("%s: not %d timed calls", name, mcpCalls)
		}
	}

	_, err = runMCPFallback([]mcpSide{bad("fsbox", mcpEditFile), good("peer", mcpEditPeer)},
		work, nil, 10*time.Second, want)
	if err == nil || !strings.Contains(err.Error(), "fsbox") {
		t.Errorf("fsbox failing: err %v", err)
	}
}

func TestTmpfsAmong(t *testing.T) {
	mounts := `/dev/sda1 / ext4 rw 0 0
tmpfs /dev/shm tmpfs rw 0 0
tmpfs /run/user/0 tmpfs rw 0 0
`
	if p, why := tmpfsAmong(mounts, []string{"/tmp", "/run/user/0", "/dev/shm"}); p != "/run/user/0" {
		t.Errorf("tmpfsAmong = %q (%s), want /run/user/0", p, why)
	}
	p, why := tmpfsAmong(mounts, []string{"/tmp", "/dev/shm"})
	if p != "" || !strings.Contains(why, "/tmp is ext4") || !strings.Contains(why, "/dev/shm is tmpfs but in /dev") {
		t.Errorf("tmpfsAmong = %q, %q", p, why)
	}
}
