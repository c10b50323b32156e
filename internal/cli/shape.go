package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// shape is what --fields and --jq do to the JSON output: keep some keys,
// or run a jq program over the result (gojq: the jq language in Go, so a
// host without jq gets the same; well kept, and gh uses it for --jq).
type shape struct {
	fields map[string]bool           // --fields: keys kept
	jq     func(input any) JQOutputs // --jq
}

// JQ compiles a jq program (internal/jq, on gojq). The fsbox binary has
// none: it runs fsbox-full for --jq (see Extras).
type JQ func(program string) (func(input any) JQOutputs, error)

// JQOutputs yields a jq program's outputs for one input, one at a time;
// an error is an output too. (gojq's iterator.)
type JQOutputs = interface{ Next() (any, bool) }

// errNeedsFull: the call needs an extra this binary does not link.
var errNeedsFull = errors.New("needs fsbox-full")

// parseShape compiles --fields and --jq; a bad jq program is usage.
// Without a compiler, --jq is errNeedsFull.
func parseShape(fields, jq string, compile JQ) (*shape, error) {
	if fields == "" && jq == "" {
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
	if jq != "" {
		if compile == nil {
			return nil, errNeedsFull
		}
		run, err := compile(jq)
		if err != nil {
			return nil, usageErr("--jq: %v", err)
		}
		sh.jq = run
	}
	return sh, nil
}

// keep filters one object's keys to --fields (anything else is left).
func (sh *shape) keep(v any) any {
	m, ok := v.(map[string]any)
	if !ok || sh.fields == nil {
		return v
	}
	for k := range m {
		if !sh.fields[k] {
			delete(m, k)
		}
	}
	return m
}

// result applies --fields to a whole result: the items of a list command
// (its counts, truncated and skipped stay), or the object's own keys.
func (sh *shape) result(v any) any {
	m, ok := v.(map[string]any)
	if !ok || sh.fields == nil {
		return v
	}
	for _, k := range listFields {
		if items, ok := m[k].([]any); ok {
			for i := range items {
				items[i] = sh.keep(items[i])
			}
			return m
		}
	}
	return sh.keep(m)
}

// generic turns a Go value into plain JSON values (maps, slices).
func generic(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var out any
	err = d.Decode(&out)
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

// write prints a result shaped: --fields, then --jq (each output a line;
// strings raw, as gh --jq prints them).
func (sh *shape) write(w io.Writer, v any, pretty bool) error {
	g, err := generic(v)
	if err != nil {
		return err
	}
	g = sh.result(g)
	if sh.jq == nil {
		return newEncoder(w, pretty).Encode(g)
	}
	var out bytes.Buffer
	iter := sh.jq(g)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := r.(error); ok {
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
