package sandbox

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/fsbox/fsbox/pkg/fserr"
)

// The journal of an object root lives in the store too ([journal] dir is
// an s3:// URL outside every root, one per tenant): below the base, one
// prefix per writable object root (named as a local journal's
// subdirectory is), holding
//
//	FSBOX-JOURNAL.TAG        the marker (also at the base): the door reads nothing below it
//	identity.json            the root it belongs to
//	changes/000000000042.json one object per change, made with If-None-Match: * (an id is
//	                         taken once, whichever host records)
//	counters                 the next id and what the changes hold (a hint, rebuilt by listing)
//	objects/SHA256           prior contents, each a copy made in the store of the version
//	                         the change replaced (its source conditioned on that version)
//	pending/NAME.json        the plan of a change of several objects while it commits
//
// Every request counts against [store] max_requests like the root's own.

const (
	objChanges = "changes/"
	objObjects = "objects/"
	objPending = "pending/"
)

func changeKey(seq int) string { return fmt.Sprintf("%s%012d.json", objChanges, seq) }

// objectJournalBase opens the store of the journal base (once).
func (s *Sandbox) objectJournalBase() (ObjectStore, error) {
	if s.jn.objStore != nil {
		return s.jn.objStore, nil
	}
	obj := s.objs[s.jn.objBase]
	if obj == nil {
		var err error
		if obj, err = openObjectStore(s.policy.Store, s.jn.objBase); err != nil {
			return nil, err
		}
	}
	s.jn.objStore = counted(obj)
	return s.jn.objStore, nil
}

// openObjectJournals opens the journal of each writable object root in
// the store, with no request: a journal is made by its first change
// (begin).
func (s *Sandbox) openObjectJournals() error {
	for _, rt := range s.writable() {
		if rt.st.kind() != kindObject {
			continue
		}
		j, err := s.openObjectJournal(rt)
		if err != nil {
			return fserr.Errorf(fserr.CodeConfig, s.policy.Source, "%s: [journal] dir %s: %v", s.policy.Source, s.jn.objBase, err)
		}
		rt.jn = j
	}
	return nil
}

func (s *Sandbox) openObjectJournal(rt *root) (*journal, error) {
	base, err := s.objectJournalBase()
	if err != nil {
		return nil, err
	}
	id, err := rt.identity()
	if err != nil {
		return nil, err
	}
	name := rt.pathHash() + "-" + id.hash()
	st := &subStore{ObjectStore: base, pre: name + "/"}
	dir := strings.TrimSuffix(s.jn.objBase, "/") + "/" + name
	// The name is the identity's hash, and an object root's identity is
	// its URL: nothing to check with a request. The journal's marker and
	// identity record are written by its first change (begin).
	return &journal{rt: rt, dir: dir, ob: st, tag: s.tagOf(rt), max: s.policy.Journal.MaxBytes, js: s.jn, base: base, id: id}, nil
}

// beginObjectJournals reads, for a change, each journal in the store:
// its plans under way and its counters, both at once, kept until the
// change ends (endObjectJournals). A journal with no counters is new (or
// lost them): its markers and identity record are put first, before the
// change writes anything in it.
func (s *Sandbox) beginObjectJournals() error {
	for _, j := range s.journals() {
		if j.ob == nil {
			continue
		}
		if err := j.begin(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sandbox) endObjectJournals() {
	for _, j := range s.journals() {
		if j.ob != nil {
			j.seen.Store(nil)
		}
	}
}

// seenState is what begin read of a journal in the store.
type seenState struct {
	plans       []pendingPlan
	next        int
	total       int64
	countersVer string
	counted     bool // next and total are the counter object's
}

func (j *journal) begin() error {
	ctx := j.ctx()
	seen := &seenState{}
	var wg sync.WaitGroup
	var perr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		seen.plans, perr = j.readPlans()
	}()
	body, ob, err := j.ob.Get(ctx, countersFile, 0, -1, "")
	wg.Wait()
	if perr != nil {
		return j.storeErr(perr)
	}
	switch {
	case err == nil:
		b, rerr := io.ReadAll(io.LimitReader(body, 256))
		body.Close()
		seen.countersVer = ob.Version
		if _, serr := fmt.Sscanf(string(b), "%d %d", &seen.next, &seen.total); rerr == nil && serr == nil && seen.next >= 1 {
			seen.counted = true
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := j.mark(); err != nil {
			if c := capErr(j.dir, err); c != nil {
				return c
			}
			return fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be made: %v", j.dir, err)
		}
	default:
		return j.storeErr(err)
	}
	j.seen.Store(seen)
	return nil
}

// mark puts the journal's markers (at the base and in the journal) and
// its identity record, where they are not yet.
func (j *journal) mark() error {
	ctx := j.ctx()
	idb, _ := json.Marshal(j.id)
	for _, put := range []struct {
		st  ObjectStore
		key string
		b   []byte
	}{{j.base, journalMarker, []byte(journalMarkerText)}, {j.ob, journalMarker, []byte(journalMarkerText)}, {j.ob, identityFile, idb}} {
		if _, err := putBytes(ctx, put.st, put.key, put.b, ObjectCond{IfAbsent: true}); err != nil && !errors.Is(err, ErrPrecondition) {
			return err
		}
	}
	return nil
}

// getAll reads key whole (at most max bytes).
func getAll(ctx context.Context, st ObjectStore, key string, max int64) ([]byte, error) {
	body, _, err := st.Get(ctx, key, 0, -1, "")
	if err != nil {
		return nil, err
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, satAdd(max, 1)))
	if err == nil && int64(len(b)) > max {
		err = fmt.Errorf("%s is over %d bytes", key, max)
	}
	return b, err
}

// putBytes puts b as key on condition c.
func putBytes(ctx context.Context, st ObjectStore, key string, b []byte, c ObjectCond) (Object, error) {
	return st.Put(ctx, key, bytes.NewReader(b), int64(len(b)), sha256.Sum256(b), c)
}

// listAll lists every key below prefix, in key order.
func listAll(ctx context.Context, st ObjectStore, prefix string) ([]Object, error) {
	var out []Object
	after := ""
	for {
		obs, _, err := st.List(ctx, prefix, "", after, 1000)
		if err != nil {
			return nil, err
		}
		was := after
		for _, ob := range obs {
			if strings.HasPrefix(ob.Key, prefix) && ob.Key > after {
				out = append(out, ob)
				after = ob.Key
			}
		}
		if len(obs) < 1000 || after == was {
			return out, nil
		}
	}
}

// ctx is the context the journal's requests run in: the call's.
func (j *journal) ctx() context.Context {
	if j.js != nil {
		if p := j.js.ctx.Load(); p != nil {
			return *p
		}
	}
	return context.Background()
}

func (j *journal) storeErr(err error) error {
	if c := capErr(j.dir, err); c != nil {
		return c
	}
	return fserr.Errorf(fserr.CodeIO, j.dir, "the journal %s cannot be read: %v", j.dir, err)
}

// objAll reads every change of a journal in the store, oldest first:
// the keys listed, the records read [store] concurrency at a time.
func (j *journal) objAll() ([]Change, error) { return j.objAllIn(j.ctx()) }

// objAllIn is objAll with its requests made in ctx.
func (j *journal) objAllIn(ctx context.Context) ([]Change, error) {
	keys, err := listAll(ctx, j.ob, objChanges)
	if err != nil {
		return nil, j.storeErr(err)
	}
	out := make([]Change, len(keys))
	ok := make([]bool, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 16)
	for i, k := range keys {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			b, err := getAll(ctx, j.ob, k.Key, 16<<20)
			if errors.Is(err, fs.ErrNotExist) {
				return // evicted meanwhile
			}
			if err != nil {
				errs[i] = err
				return
			}
			out[i], ok[i] = j.decode(b)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, j.storeErr(err)
	}
	var all []Change
	for i, c := range out {
		if ok[i] {
			all = append(all, c)
		}
	}
	slices.SortFunc(all, func(a, b Change) int { return a.seq - b.seq })
	return all, nil
}

// objFind reads the change seq.
func (j *journal) objFind(seq int) (Change, bool, error) {
	b, err := getAll(j.ctx(), j.ob, changeKey(seq), 16<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return Change{}, false, nil
	}
	if err != nil {
		return Change{}, false, j.storeErr(err)
	}
	c, ok := j.decode(b)
	return c, ok && c.seq == seq, nil
}

// objCounters is the next id and the total the counter object holds
// (rebuilt from the changes when it is missing or damaged), and its
// version ("" when missing).
func (j *journal) objCounters() (next int, total int64, ver string, err error) {
	return j.objCountersIn(j.ctx())
}

// objCountersIn is objCounters with its requests made in ctx.
func (j *journal) objCountersIn(ctx context.Context) (next int, total int64, ver string, err error) {
	if seen := j.seen.Load(); seen != nil && seen.counted {
		return seen.next, seen.total, seen.countersVer, nil
	}
	body, ob, err := j.ob.Get(ctx, countersFile, 0, -1, "")
	if err == nil {
		b, rerr := io.ReadAll(io.LimitReader(body, 256))
		body.Close()
		if rerr == nil {
			if _, serr := fmt.Sscanf(string(b), "%d %d", &next, &total); serr == nil && next >= 1 {
				return next, total, ob.Version, nil
			}
		}
		ver = ob.Version
	} else if !errors.Is(err, fs.ErrNotExist) {
		return 0, 0, "", j.storeErr(err)
	}
	changes, err := j.objAllIn(ctx)
	if err != nil {
		return 0, 0, "", err
	}
	next = 1
	for _, c := range changes {
		next = max(next, c.seq+1)
		total = satAdd(total, c.cost(c.size))
	}
	return next, total, ver, nil
}

// objSetCounters writes the counter object (on condition c; a refusal
// means another host recorded meanwhile, whose counters stand).
func (j *journal) objSetCounters(next int, total int64, c ObjectCond) {
	putBytes(j.ctx(), j.ob, countersFile, fmt.Appendf(nil, "%d %d\n", next, total), c)
}

// maxIDTries bounds how many taken ids a record skips before it lists
// the changes for the next free one.
const maxIDTries = 16

// recordInStore records rec in a journal in the store: the record is a
// new object whose key is its id, made only if no other host took that
// id first.
func (s *Sandbox) recordInStore(j *journal, c Change) (string, error) {
	fail := func(err error) (string, error) {
		return "", fserr.Errorf(fserr.CodeIO, j.dir, "the change was made, but the journal %s cannot record it: %v", j.dir, err)
	}
	// The change is made: its record is written whatever ended the call
	// (the request cap, the deadline), so that undo can reach it.
	ctx, cancel := uncapped(j.ctx())
	defer cancel()
	next, total, ver, err := j.objCountersIn(ctx)
	if err != nil {
		return "", err
	}
	rec, line, budget, err := s.newRecord(j, c, next, total)
	if err != nil {
		return "", err
	}
	cond := ObjectCond{IfAbsent: true}
	if ver != "" {
		cond = ObjectCond{IfVersion: ver}
	}
	// The counters go with the record, at once (a record refused for a
	// taken id leaves them a step ahead: ids skip one, nothing is lost).
	first := next
	counters := fmt.Appendf(nil, "%d %d\n", next+1, satAdd(total, rec.cost(int64(len(line))+1)))
	counted := make(chan struct{})
	go func() {
		defer close(counted)
		putBytes(ctx, j.ob, countersFile, counters, cond)
	}()
	for try := 1; ; try++ {
		_, err := putBytes(ctx, j.ob, changeKey(next), line, ObjectCond{IfAbsent: true})
		if err == nil {
			break
		}
		if !errors.Is(err, ErrPrecondition) || try > 2*maxIDTries {
			return fail(err)
		}
		// Another host took the id: the next one, or past every change.
		next++
		if try == maxIDTries {
			if next, _, _, err = j.objCountersIn(ctx); err != nil {
				return fail(err)
			}
			if all, err := j.objAllIn(ctx); err == nil && len(all) > 0 {
				next = max(next, all[len(all)-1].seq+1)
			}
		}
		rec.ID = strconv.Itoa(next)
		if line, err = json.Marshal(rec); err != nil {
			return fail(err)
		}
	}
	<-counted
	rec.size = int64(len(line)) + 1
	total = satAdd(total, rec.cost(rec.size))
	if next != first || total > budget {
		// Ids skipped, or the journal is evicted: the counters are
		// written again, as they are now.
		if total > budget {
			if changes, err := j.objAllIn(ctx); err == nil {
				total = j.evict(changes, budget)
			}
		}
		putBytes(ctx, j.ob, countersFile, fmt.Appendf(nil, "%d %d\n", next+1, total), ObjectCond{})
	}
	return j.tag + rec.ID, nil
}

// objRewrite keeps only the changes keep: the others' records go, then
// every prior content no kept change refers to.
func (j *journal) objRewrite(keep []Change) {
	ctx := j.ctx()
	kept := map[int]bool{}
	used := map[string]bool{}
	for _, c := range keep {
		kept[c.seq] = true
		for _, p := range c.Paths {
			if p.Before != nil && c.Kept {
				used[p.Before.SHA256] = true
			}
		}
	}
	keys, err := listAll(ctx, j.ob, objChanges)
	if err != nil {
		return
	}
	for _, k := range keys {
		seq, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(k.Key, objChanges), ".json"))
		if err == nil && !kept[seq] {
			j.ob.Delete(ctx, k.Key, "")
		}
	}
	objs, err := listAll(ctx, j.ob, objObjects)
	if err != nil {
		return
	}
	for _, o := range objs {
		if !used[strings.TrimPrefix(o.Key, objObjects)] {
			j.ob.Delete(ctx, o.Key, "")
		}
	}
}

// objPendingBytes is what the plans under way hold (each its size and
// 4 KiB).
func (j *journal) objPendingBytes() int64 {
	obs, err := listAll(j.ctx(), j.ob, objPending)
	if err != nil {
		return 0
	}
	var n int64
	for _, o := range obs {
		n += o.Size + 4096
	}
	return n
}

// keepVersion keeps the version ob of key (in the object root o) in the
// journal the running change records in, as objects/SHA256: a copy made
// in the store, conditioned on that version (a conflict when another
// writer replaced it since). It returns the prior state and the bytes
// newly stored; without a journal, the state alone.
func (s *Sandbox) keepVersion(o *objectRoot, key string, ob Object, given string) (*FileState, int64, error) {
	st := &FileState{Type: "file", Size: ob.Size, SHA256: ob.SHA256} // no mode: an object has none
	j := s.jn.cur
	if j == nil || j.ob == nil {
		return st, 0, nil
	}
	ctx := s.context()
	if st.SHA256 == "" {
		// The store keeps no checksum of it: hash the version itself.
		body, got, err := o.obj.Get(ctx, key, 0, -1, ob.Version)
		if err != nil {
			return nil, 0, keptErr(given, err)
		}
		h := sha256.New()
		n, err := io.Copy(h, body)
		body.Close()
		if err != nil {
			return nil, 0, keptErr(given, err)
		}
		st.SHA256, st.Size = hex.EncodeToString(h.Sum(nil)), n
		_ = got
	}
	// Copied whatever the journal holds: a content kept already is
	// copied over itself (the same bytes), which costs no more than the
	// request that would ask first.
	name := objObjects + st.SHA256
	if !j.fits(st.Size) {
		j.mu.Lock()
		j.unkept = true
		j.mu.Unlock()
		return st, 0, nil
	}
	if _, err := copyObject(ctx, j.ob, name, o.obj, key, ob.Version, st.Size); err != nil {
		return nil, 0, keptErr(given, err)
	}
	return st, st.Size, nil
}

// keptErr is a refusal to keep a prior version: conflict when it was
// replaced meanwhile.
func keptErr(given string, err error) error {
	if errors.Is(err, ErrPrecondition) || errors.Is(err, fs.ErrNotExist) {
		return fserr.Errorf(fserr.CodeConflict, given, "%s was changed by another writer during the call: nothing was changed", given)
	}
	if c := capErr(given, err); c != nil {
		return c
	}
	var fe *fserr.Error
	if errors.As(err, &fe) {
		return err
	}
	return fserr.Errorf(fserr.CodeIO, given, "the journal cannot keep what %s held: %v", given, err)
}

// objContent reads the prior content sum from a journal in the store.
func (j *journal) objContent(sum string, max int64) ([]byte, error) {
	b, err := getAll(j.ctx(), j.ob, objObjects+sum, max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fserr.Errorf(fserr.CodeNotFound, "", "the journal no longer holds the content %s (evicted?)", sum)
	}
	if err != nil && strings.Contains(err.Error(), "is over") {
		return nil, &fserr.Error{Code: fserr.CodeTooLarge, Rule: fserr.RuleSizeCap, Msg: fmt.Sprintf("the kept content %s is over max_write_bytes = %d", sum, max)}
	}
	if err != nil {
		return nil, fserr.Errorf(fserr.CodeIO, "", "reading kept content %s: %v", sum, err)
	}
	return b, nil
}

// objPutPlan, objDonePlan and objPlans keep the plans of changes under
// way as pending/NAME.json objects.
func (j *journal) objPutPlan(name string, b []byte) error {
	_, err := putBytes(j.ctx(), j.ob, name, b, ObjectCond{IfAbsent: true})
	return err
}

func (j *journal) objDonePlan(name string) { j.ob.Delete(j.ctx(), name, "") }

func (j *journal) objPlans() []pendingPlan {
	if seen := j.seen.Load(); seen != nil {
		return seen.plans
	}
	plans, _ := j.readPlans()
	return plans
}

// readPlans lists and reads the plans under way.
func (j *journal) readPlans() ([]pendingPlan, error) {
	ctx := j.ctx()
	obs, err := listAll(ctx, j.ob, objPending)
	if err != nil {
		return nil, err
	}
	var out []pendingPlan
	for _, o := range obs {
		pp := pendingPlan{name: strings.TrimPrefix(o.Key, objPending)}
		b, err := getAll(ctx, j.ob, o.Key, 16<<20)
		if errors.Is(err, fs.ErrNotExist) {
			continue // finished meanwhile
		}
		if err == nil {
			err = json.Unmarshal(b, &pp.plan)
		}
		pp.err = err
		out = append(out, pp)
	}
	return out, nil
}
