package ops

import (
	"bytes"

	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

// The streaming operations' sinks: each takes the sink a face set
// (spec.Input.Sink) and returns what the operation calls for each item,
// in the form the face prints, chosen once before the call (the item as
// a value, or the text form); nil when the face set none (the result
// collects the items). A face that shapes the items itself (the
// reference MCP profile) runs the operation with its own sink type
// (SliceLines, FindPaths).
//
// Each operation's descriptor, text form (spec.Texter) and sinks sit in
// its own file, beside its options and its result; slice and sort share
// lineSink.

// lineSink sends each line as the file has it (the text form), or as a
// JSON string without its line end (an item).
func lineSink(s *spec.Sink) LineSink {
	switch {
	case s == nil:
		return nil
	case s.Text != nil:
		w := s.Text
		return func(line []byte) error { _, err := w.Write(w.Content(line)); return err }
	}
	item := s.Item
	return func(line []byte) error { return item(jsonText(textio.TrimEOL(line))) }
}

// idleOf is the sink's Idle (nil without a sink).
func idleOf(s *spec.Sink) func() {
	if s == nil {
		return nil
	}
	return s.Idle
}

// jsonText is a line or field as a JSON string holds it: a run of bytes
// that are not UTF-8 becomes one U+FFFD, the same in every form (json's
// collected lists, json's and ndjson's items).
func jsonText(b []byte) string { return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))) }
