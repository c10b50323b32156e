package cli

import "github.com/fsbox/fsbox/pkg/spec"

// jsonPrinter prints --format json: one JSON object. A streaming
// operation's items go into the object as they come (jsonList), so memory
// does not grow with their number; --jq needs the whole document, and a
// result type without a list has nowhere to put them, so those collect.
type jsonPrinter struct {
	p    *output
	s    *stream   // set while items stream
	list *jsonList // the object being written as the items come
}

func newJSONPrinter(p *output, op *spec.Op, streams bool) *jsonPrinter {
	j := &jsonPrinter{p: p}
	if !streams || (p.shape != nil && p.shape.jq != nil) {
		return j
	}
	out, done := p.jsonOut()
	s := newStream(out, done)
	if j.list = newJSONList(p, s.bw, op.Result); j.list != nil {
		j.s = s
	}
	return j
}

func (j *jsonPrinter) Sink() *spec.Sink {
	if j.list == nil {
		return nil
	}
	return j.s.sink(j.p, j.list.add, nil)
}

// Done ends the streamed object (the list's end and the other fields),
// or prints the collected result whole.
func (j *jsonPrinter) Done(r spec.Result, _ spec.Outcome) error {
	if j.list == nil {
		return j.p.whole(r)
	}
	if err := j.list.finish(r); err != nil {
		return err
	}
	return j.s.end()
}
