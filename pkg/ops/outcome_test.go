package ops

import (
	"errors"
	"slices"
	"testing"

	"github.com/fsbox/fsbox/pkg/fserr"
	"github.com/fsbox/fsbox/pkg/spec"
)

// TestListTags: the lists each operation's result declares by tag
// (fsbox:"items", fsbox:"list") are the ones the faces treat as lists
// (ndjson's items and summary, --fields on each item, json's streamed
// list); a streaming operation's items are among them.
func TestListTags(t *testing.T) {
	want := map[string][]string{
		"cut": {"rows"}, "find": {"paths", "entries"}, "grep": {"matches", "counts", "paths"}, "links": {"links"},
		"ls": {"entries"}, "patch": {"files"}, "slice": {"lines"}, "sort": {"lines"}, "stat": {"files"}, "undo": {"files"}, "wc": {"files"},
	}
	for _, op := range Registry.Ops() {
		if got := spec.ListKeys(op.Result); !slices.Equal(got, want[op.Name]) {
			t.Errorf("%s: lists %q, want %q", op.Name, got, want[op.Name])
		}
		items := slices.ContainsFunc(spec.ListFields(op.Result), func(f spec.ListField) bool { return f.Items })
		if op.Streams && !items {
			t.Errorf("%s streams but declares no items", op.Name)
		}
	}
	// stat of several paths answers with its own type.
	if got := spec.ListFields(StatFilesResult{}); len(got) != 1 || got[0].Key != "files" || !got[0].Items {
		t.Errorf("StatFilesResult's lists: %+v", got)
	}
	// The big strings, written in place.
	if spec.BigString(&ReadResult{}) == nil || spec.BigString(&EditResult{}) == nil {
		t.Error("read's content or edit's diff is not declared big")
	}
}

// TestOutcomes: what each kind of result says beyond its JSON.
func TestOutcomes(t *testing.T) {
	first := &fserr.Error{Code: fserr.CodeNotFound, Path: "nope", Msg: "nope does not exist"}
	failed := PathErrors{Errors: []PathError{{Path: "nope", Code: fserr.CodeNotFound, Message: "nope does not exist"}}, ErrorsMore: 2, first: first}
	cut := Truncation{Truncated: true, Limit: "max_results", NextCursor: "c1", Cuts: []string{"max_results"}}
	for _, c := range []struct {
		name string
		r    spec.Result
		want spec.Outcome
	}{
		{"whole", WriteResult{}, spec.Outcome{}},
		{"cut", LsResult{Truncation: cut}, spec.Outcome{Cut: &spec.Cut{Limit: "max_results", NextCursor: "c1", Cuts: []string{"max_results"}}}},
		{"a quiet --limit is no cut", SliceResult{Truncation: Truncation{Limit: "limit", NextCursor: "c"}}, spec.Outcome{}},
		{"grep found nothing", GrepResult{}, spec.Outcome{NoMatch: true}},
		{"grep -q found one", GrepResult{Count: 1, quiet: true}, spec.Outcome{Quiet: true}},
		{"grep notes and failures", GrepResult{Count: 1, notes: []string{"binary file b matches"}, PathErrors: failed},
			spec.Outcome{Notes: []string{"binary file b matches"}, Failures: &spec.Failures{First: first, Shown: []*fserr.Error{{Code: fserr.CodeNotFound, Path: "nope", Msg: "nope does not exist"}}, More: 2}}},
		{"wc's deadline", WcResult{Truncated: true, Limit: "timeout", Cuts: []string{"timeout"}}, spec.Outcome{Cut: &spec.Cut{Limit: "timeout", Cuts: []string{"timeout"}}}},
		{"history's quiet --limit", HistoryResult{NextCursor: "c"}, spec.Outcome{}},
		{"read unchanged", &ReadUnchanged{Path: "a", SHA256: "ab"}, spec.Outcome{Notes: []string{"a is unchanged (sha256 ab)"}}},
	} {
		got := c.r.Outcome()
		if !sameOutcome(got, c.want) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
}

func sameOutcome(a, b spec.Outcome) bool {
	if (a.Cut == nil) != (b.Cut == nil) || (a.Failures == nil) != (b.Failures == nil) {
		return false
	}
	if a.Cut != nil && (a.Cut.Limit != b.Cut.Limit || a.Cut.NextCursor != b.Cut.NextCursor || !slices.Equal(a.Cut.Cuts, b.Cut.Cuts)) {
		return false
	}
	if f, g := a.Failures, b.Failures; f != nil {
		if !errors.Is(f.First, g.First) || f.More != g.More || len(f.Shown) != len(g.Shown) {
			return false
		}
		for i := range f.Shown {
			if *f.Shown[i] != *g.Shown[i] {
				return false
			}
		}
	}
	return slices.Equal(a.Notes, b.Notes) && a.NoMatch == b.NoMatch && a.Quiet == b.Quiet
}
