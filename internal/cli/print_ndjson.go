package cli

import (
	"bufio"
	"bytes"

	"github.com/fsbox/fsbox/pkg/spec"
)

// ndjsonPrinter prints --format ndjson: a list result's items a line each
// (as they come, for a streaming operation), then the rest of the result
// as the one summary line; any other result as one document.
type ndjsonPrinter struct {
	p *output
	s *stream // set while items stream
}

func newNDJSONPrinter(p *output, streams bool) *ndjsonPrinter {
	n := &ndjsonPrinter{p: p}
	if streams {
		n.s = newStream(p.jsonOut())
	}
	return n
}

func (n *ndjsonPrinter) Sink() *spec.Sink {
	if n.s == nil {
		return nil
	}
	return n.s.sink(n.p, n.p.itemEncoder(n.s.bw), nil)
}

// Done writes the summary after streamed items; a collected result with
// items (its fsbox:"items" list) goes out an item a line and its summary
// in one write, any other whole.
func (n *ndjsonPrinter) Done(r spec.Result, _ spec.Outcome) error {
	if n.s != nil {
		summary(n.s.bw, r)
		return n.s.end()
	}
	items, ok := spec.Items(r)
	if !ok {
		return n.p.whole(r)
	}
	var buf bytes.Buffer
	bw := bufio.NewWriterSize(&buf, 64<<10)
	enc := n.p.itemEncoder(bw)
	for i := range items.Len() {
		if err := enc(items.Index(i).Interface()); err != nil {
			return err
		}
	}
	summary(bw, r)
	if err := bw.Flush(); err != nil {
		return err
	}
	out, _ := n.p.jsonOut() // one write of whole lines: nothing is held back
	_, err := out.Write(buf.Bytes())
	return err
}
