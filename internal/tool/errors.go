package tool

import (
	"encoding/json"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// ErrorEnvelope is the error object a failed call answers with: the one
// line the command line's stderr gets, a tool call's isError text.
type ErrorEnvelope struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the error itself: its code, its message (with its hint
// spelled by the face), the path and the rule.
type ErrorBody struct {
	Code    fserr.Code `json:"code"`
	Message string     `json:"message"`
	Path    string     `json:"path,omitempty"`
	Rule    fserr.Rule `json:"rule,omitempty"`
}

// ErrorOf is err's error object, its hint spelled by spell (the command
// line names a flag, a tool its argument).
func ErrorOf(err error, spell func(*fserr.Hint) string) ErrorEnvelope {
	e := fserr.AsError(err)
	return ErrorEnvelope{ErrorBody{Code: e.Code, Message: e.Message(spell), Path: e.Path, Rule: e.Rule}}
}

// ErrorJSON is err's error object as JSON, without a newline.
func ErrorJSON(err error, spell func(*fserr.Hint) string) []byte {
	b, _ := json.Marshal(ErrorOf(err, spell))
	return b
}
