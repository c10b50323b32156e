package ops

import (
	"bytes"

	"github.com/fsbox/fsbox/pkg/spec"
	"github.com/fsbox/fsbox/pkg/textio"
)

// The streaming operations' sinks: each takes the sink a face set
// (spec.Input.Sink) and returns what the operation calls for each item,
// in the form the face prints, chosen once before the call; nil when the
// face set none (the result collects the items). A face that shapes the
// items itself (the reference MCP profile) may set the operation's own
// sink type (LineSink, RowSink, PathSink), which is called as it is.
//
// Each operation's descriptor, text form (spec.Texter) and sinks sit in
// its own file, beside its options and its result; slice and sort share
// lineSink.

// lineSink sends each line as the file has it (the text form), or as a
// JSON string without its line end (an item).
func lineSink(s any) LineSink {
	switch s := s.(type) {
	case LineSink:
		return s
	case spec.ItemSink:
		return func(line []byte) error { return s(jsonText(textio.TrimEOL(line))) }
	case spec.TextWriter:
		return func(line []byte) error { _, err := s.Write(s.Content(line)); return err }
	}
	return nil
}

// jsonText is a line or field as a JSON string holds it: a run of bytes
// that are not UTF-8 becomes one U+FFFD, the same in every form (json's
// collected lists, json's and ndjson's items).
func jsonText(b []byte) string { return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))) }
