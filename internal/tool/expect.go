package tool

import (
	"encoding/json"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/spec"
)

// ExpectProperty is the native MCP tools' one precondition argument
// (SPEC §4, Preconditions): the sha256 of the file a change replaces or
// removes, or "absent" for a name that must be free. It stands for the
// operation's own expect-sha256, expect-absent and (cp, mv) force.
const ExpectProperty = "expect"

// expectTools are the operations whose tool takes expect, each with
// whether every call can name one (and so must, under [write]
// require_precondition): rm of a directory has no sha256 to name.
var expectTools = map[string]bool{"write": true, "edit": true, "cp": true, "mv": true, "rm": false}

// TakesExpect says whether op's native tool takes expect.
func TakesExpect(op string) bool {
	_, ok := expectTools[op]
	return ok
}

// AddExpect gives t, op's native tool, the expect argument (when op takes
// one), listed in required when the policy requires preconditions and
// every call of op can name one.
func AddExpect(t *Tool, op *spec.Op, require bool) {
	must, ok := expectTools[op.Name]
	if !ok {
		return
	}
	desc := map[string]string{
		"write": `what the write replaces: the sha256 (64 hex digits) the file has now, or "absent" to create a new file (the same as expect_sha256 and expect_absent)`,
		"edit":  `the sha256 (64 hex digits) of the content the edit changes, as read gives it (the same as expect_sha256)`,
		"cp":    `the sha256 (64 hex digits) of the file at dst the copy replaces (implies force), or "absent": dst must not exist`,
		"mv":    `the sha256 (64 hex digits) of the file at dst the move replaces (implies force), or "absent": dst must not exist`,
		"rm":    `the sha256 (64 hex digits) of the file removed (the same as expect_sha256); a directory takes none`,
	}[op.Name]
	if require && must {
		desc += "; the policy requires it (precondition_required without it)"
	} else if require {
		desc += "; the policy requires it for a file (precondition_required without it), and removes only an empty directory"
	}
	t.InputSchema.Properties[ExpectProperty] = &spec.Schema{Type: "string", Pattern: "^([0-9a-fA-F]{64}|absent)$", Description: desc}
	if require && must {
		t.InputSchema.Required = append(t.InputSchema.Required, ExpectProperty)
	}
}

// SplitExpect maps a tool call's expect onto op's own arguments:
// expect_sha256, or for "absent" expect_absent (write) or no force (cp,
// mv); a sha256 given to cp or mv implies force. Arguments that are no
// JSON object, or carry no expect, are passed on untouched.
func SplitExpect(op string, raw json.RawMessage) (json.RawMessage, error) {
	if !TakesExpect(op) {
		return raw, nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw, nil
	}
	v, ok := m[ExpectProperty]
	if !ok {
		return raw, nil
	}
	delete(m, ExpectProperty)
	var e string
	if json.Unmarshal(v, &e) != nil || (e != "absent" && !isHex64(e)) {
		return raw, fserr.Errorf(fserr.CodeUsage, "", `expect wants a sha256 (64 hex digits) or "absent", got %s`, v)
	}
	for _, other := range []string{"expect_sha256", "expect_absent", "no_clobber"} {
		if _, both := m[other]; both {
			return raw, fserr.Errorf(fserr.CodeUsage, "", "give expect or %s, not both", other)
		}
	}
	t := json.RawMessage("true")
	switch {
	case e == "absent" && op == "write":
		m["expect_absent"] = t
	case e == "absent" && (op == "cp" || op == "mv"):
		if f, ok := m["force"]; ok && string(f) != "false" {
			return raw, fserr.Errorf(fserr.CodeUsage, "", `expect "absent" keeps an existing dst; it does not go with force`)
		}
	case e == "absent":
		return raw, fserr.Errorf(fserr.CodeUsage, "", `expect "absent" names no file to %s: give the sha256 of the file`, op)
	default:
		if op == "cp" {
			m["expect_sha256"], _ = json.Marshal([]string{e}) // cp's is repeatable (PATH=HEX with recursive)
		} else {
			m["expect_sha256"], _ = json.Marshal(e)
		}
		if op == "cp" || op == "mv" {
			m["force"] = t
		}
	}
	return json.Marshal(m)
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
