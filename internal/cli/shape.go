package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/spec"
)

// shape is what --fields and --jq do to the JSON output: keep some keys,
// or run a jq program over the result (gojq: the jq language in Go, so a
// host without jq gets the same; well kept, and gh uses it for --jq).
type shape struct {
	fields map[string]bool                                // --fields: keys kept
	jq     func(ctx context.Context, input any) JQOutputs // --jq
}

// JQOutputs yields a jq program's outputs for one input, one at a time;
// an error is an output too. (gojq's iterator.)
type JQOutputs = interface{ Next() (any, bool) }

// parseShape compiles --fields and --jq (internal/jq, on gojq, linked
// into every binary: --jq runs in the call's own process); a bad jq
// program is usage.
func parseShape(fields, program string, compile JQCompiler) (*shape, error) {
	if fields == "" && program == "" {
		return nil, nil
	}
	sh := &shape{}
	if fields != "" {
		sh.fields = map[string]bool{}
		for _, f := range strings.Split(fields, ",") {
			if f = strings.TrimSpace(f); f != "" {
				sh.fields[f] = true
			}
		}
	}
	if program != "" {
		if compile == nil {
			return nil, fserr.Errorf(fserr.CodeConfig, "", "--jq is not built into this program (it is %s): run fsbox", MCPBinary)
		}
		run, err := compile(program)
		if err != nil {
			return nil, usageErr("--jq: %v", err)
		}
		sh.jq = run
	}
	return sh, nil
}

// checkFields refuses a --fields name that op's result (or its items,
// for a list command) does not have: a typo would print {} an item.
func (sh *shape) checkFields(op *spec.Op) error {
	if sh == nil || sh.fields == nil {
		return nil
	}
	known := map[string]bool{}
	out := spec.OutputSchema(op)
	lists := spec.ListKeys(op.Result)
	for k, p := range out.Properties {
		known[k] = true
		if slices.Contains(lists, k) && p.Items != nil {
			for ik := range p.Items.Properties {
				known[ik] = true
			}
		}
	}
	var bad []string
	for f := range sh.fields {
		if !known[f] {
			bad = append(bad, f)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	names := make([]string, 0, len(known))
	for k := range known {
		names = append(names, k)
	}
	sort.Strings(names)
	return usageErr("--fields: %s has no field %s (its fields: %s)", op.Name, strings.Join(bad, ", "), strings.Join(names, ", "))
}

// keepJSON filters one JSON object's keys to --fields, in the order the
// object has them (the schema's): anything but an object is left.
func (sh *shape) keepJSON(raw json.RawMessage) json.RawMessage {
	if sh.fields == nil {
		return raw
	}
	keys, vals, ok := objectOf(raw)
	if !ok {
		return raw
	}
	out := []byte{'{'}
	for i, k := range keys {
		if !sh.fields[k] {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = appendKey(out, k)
		out = append(out, vals[i]...)
	}
	return append(out, '}')
}

// resultJSON applies --fields to a whole result: the items of its list
// (the first of lists it holds; its counts, truncated and skipped stay),
// or the object's own keys; the keys keep their order.
func (sh *shape) resultJSON(raw json.RawMessage, lists []string) json.RawMessage {
	keys, vals, ok := objectOf(raw)
	if !ok || sh.fields == nil {
		return raw
	}
	for i, k := range keys {
		if !slices.Contains(lists, k) {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(vals[i], &items) != nil {
			continue
		}
		list := []byte{'['}
		for j, it := range items {
			if j > 0 {
				list = append(list, ',')
			}
			list = append(list, sh.keepJSON(it)...)
		}
		vals[i] = append(list, ']')
		out := []byte{'{'}
		for j, k := range keys {
			if j > 0 {
				out = append(out, ',')
			}
			out = append(appendKey(out, k), vals[j]...)
		}
		return append(out, '}')
	}
	return sh.keepJSON(raw)
}

// objectOf splits a JSON object into its keys and raw values, in order.
func objectOf(raw json.RawMessage) (keys []string, vals []json.RawMessage, ok bool) {
	d := json.NewDecoder(bytes.NewReader(raw))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, nil, false
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, nil, false
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, vals = append(keys, t.(string)), append(vals, v)
	}
	return keys, vals, true
}

func appendKey(b []byte, k string) []byte {
	kb, _ := json.Marshal(k)
	return append(append(b, kb...), ':')
}

// marshal is v as fsbox writes JSON (no HTML escaping).
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := newEncoder(&b, false).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// plain turns JSON into plain values (maps, slices), as gojq takes them.
func plain(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	err := d.Decode(&out)
	return normalizeNumbers(out), err
}

// normalizeNumbers turns json.Numbers into int or float64, which gojq takes.
func normalizeNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = normalizeNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalizeNumbers(e)
		}
	}
	return v
}

// jqGrace is how long --jq may run past the call's deadline: the 100 ms
// by which a result the deadline cut is printed (SPEC §5).
const jqGrace = 100 * time.Millisecond

// jqContext is what --jq runs under: ctx's deadline plus jqGrace (and
// ctx's cancel, when ctx is cancelled rather than out of time).
func jqContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	jctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), d.Add(jqGrace))
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	return jctx, func() { stop(); cancel() }
}

// write prints a result shaped: --fields, then --jq (each output a line;
// strings raw, as gh --jq prints them). The jq program runs under the
// call's deadline (ctx's) plus jqGrace: when it runs out, nothing it gave
// is printed, and a call that changed nothing fails with timeout, while
// one that may have made a change (change: the operation is no read)
// prints its result unshaped, with truncated and limit "timeout", and
// exits 9 (SPEC "Roots by identity [seal]": never as if nothing changed).
func (sh *shape) write(ctx context.Context, w io.Writer, v any, pretty, change bool) error {
	raw, err := marshal(v)
	if err != nil {
		return err
	}
	unshaped := raw
	raw = sh.resultJSON(raw, spec.ListKeys(v))
	if sh.jq == nil {
		if pretty {
			var b bytes.Buffer
			if err := json.Indent(&b, raw, "", "  "); err != nil {
				return err
			}
			raw = b.Bytes()
		}
		_, err = w.Write(append(raw, '\n'))
		return err
	}
	// gojq takes plain values: its objects print with their keys sorted.
	g, err := plain(raw)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	jctx, cancel := jqContext(ctx)
	defer cancel()
	iter := sh.jq(jctx, g)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := r.(error); ok {
			if jctx.Err() != nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)) {
				return jqOutOfTime(w, unshaped, jctx.Err(), pretty, change)
			}
			return usageErr("--jq: %v", err)
		}
		if s, ok := r.(string); ok {
			out.WriteString(s)
			out.WriteByte('\n')
			continue
		}
		if err := newEncoder(&out, pretty).Encode(r); err != nil {
			return err
		}
	}
	_, err = w.Write(out.Bytes())
	return err
}

// jqOutOfTime ends a call whose --jq did not finish in time (err: its
// context's): the result unshaped, marked cut by the deadline, when the
// call may have changed something (exit 9, nothing on stderr), else
// timeout with stdout empty. A cancel is the context's error.
func jqOutOfTime(w io.Writer, raw json.RawMessage, err error, pretty, change bool) error {
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if !change {
		return &fserr.Error{Code: fserr.CodeTimeout, Err: err,
			Msg: "--jq did not finish by the call's deadline (max_call_seconds, --timeout, plus 100 ms): nothing was printed"}
	}
	if keys, vals, ok := objectOf(raw); ok {
		set := map[string]json.RawMessage{"truncated": json.RawMessage("true"), "limit": json.RawMessage(`"timeout"`)}
		out := []byte{'{'}
		add := func(k string, v json.RawMessage) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(appendKey(out, k), v...)
		}
		for i, k := range keys {
			if v, ok := set[k]; ok {
				vals[i] = v
				delete(set, k)
			}
			add(k, vals[i])
		}
		for _, k := range []string{"truncated", "limit"} {
			if v, ok := set[k]; ok {
				add(k, v)
			}
		}
		raw = append(out, '}')
	}
	if pretty {
		var b bytes.Buffer
		if json.Indent(&b, raw, "", "  ") == nil {
			raw = b.Bytes()
		}
	}
	if _, werr := w.Write(append(raw, '\n')); werr != nil {
		return werr
	}
	return printed{&fserr.Error{Code: fserr.CodeTimeout, Err: err,
		Msg: "--jq did not finish by the call's deadline: the result is printed as it is, with limit \"timeout\""}}
}
