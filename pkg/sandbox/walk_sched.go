package sandbox

import (
	"sync"
	"sync/atomic"

	"github.com/fsbox/fsbox/pkg/ignore"
)

// A walk lists directories ahead of itself on the other cores: every
// subdirectory it will enter becomes a dirJob, pushed on a stack that
// workers pop in depth-first order (the order the walk will want them).
// The walk reports entries strictly in order; when it reaches a job no
// worker has started, it prepares the directory itself, so it never waits
// for a worker that is not already busy with exactly what it needs.
//
// At most window directories are prepared ahead and not yet taken by the
// walk, which bounds the descriptors and memory held beyond the serial
// walk's one directory per level.

const (
	jobPending   int32 = iota // on the stack, not started
	jobRunning                // being prepared (by a worker or the walk)
	jobDone                   // prepared
	jobDiscarded              // given up before it started
)

type failKind uint8

const (
	failNone   failKind = iota
	failDenied          // refused by the policy, or a followed symlink leading out
	failError           // could not be opened
	failLoop            // a followed symlink to a directory already on the path
)

// dirJob is one directory of a walk.
type dirJob struct {
	// How to reach it. from holds one reference until the job runs.
	from      *Dir
	name      string // in from; or, via a followed symlink, root-relative
	via       bool
	display   string
	relPrefix string // its path relative to the walk's start
	depth     int    // its own depth (the start is 0)
	list      bool   // list its entries (false at --max-depth: only opened)
	stack     *ignore.Stack
	ancestors *keyNode // the directories above it, for -L loops

	state    atomic.Int32
	done     chan struct{} // closed when prepared
	byWorker bool          // holds a window slot until taken

	// What preparing found.
	dir     *Dir // opened; nil when fail says why not
	fail    failKind
	items   []walkItem
	skipped WalkSkipped
	denied  []string // paths to tell onDenied, in order
	listErr error    // why its listing failed (counted in skipped.Errors)
}

type walkItem struct {
	ent *Entry
	sub *dirJob // set for a directory
}

// keyNode is an immutable list of directory identities (dev, inode).
type keyNode struct {
	key  [2]uint64
	next *keyNode
}

func (k *keyNode) has(key [2]uint64) bool {
	for ; k != nil; k = k.next {
		if k.key == key {
			return true
		}
	}
	return false
}

// Add adds o's counts to s.
func (s *WalkSkipped) Add(o WalkSkipped) {
	s.Ignored += o.Ignored
	s.Hidden += o.Hidden
	s.Denied += o.Denied
	s.Loops += o.Loops
	s.Errors += o.Errors
	s.LongPaths += o.LongPaths
	s.IgnoreRules += o.IgnoreRules
	s.byRules += o.byRules
	s.reported += o.reported
}

// get makes sure j is prepared and takes it: prepared now by the walk if
// no worker started it, else waited for.
func (w *walker) get(j *dirJob) {
	if j.state.CompareAndSwap(jobPending, jobRunning) {
		w.prepare(j, &w.ctx)
		j.state.Store(jobDone)
		close(j.done)
		return
	}
	<-j.done
	if j.byWorker {
		w.sched.window.Release()
	}
}

// discard gives up a job the walk will not enter, closing whatever it
// holds; one not yet started never will be.
func (w *walker) discard(j *dirJob) {
	if j.state.CompareAndSwap(jobPending, jobDiscarded) {
		j.from.Close()
		j.from = nil
		return
	}
	w.get(j)
	w.release(j)
}

// release closes a taken job's directory and gives up its subdirectories.
func (w *walker) release(j *dirJob) {
	for _, it := range j.items {
		if it.sub != nil {
			w.discard(it.sub)
		}
	}
	j.items = nil
	if j.dir != nil {
		j.dir.Close()
	}
}

// sched runs the workers of one walk.
type sched struct {
	w      *walker
	mu     sync.Mutex
	cond   sync.Cond
	stack  []*dirJob
	closed bool
	window *semaphore
	quit   chan struct{}
	wg     sync.WaitGroup
}

const walkWindow = 64

// frugalWindow is the read-ahead until the descriptor table has grown
// (fdtable.go): with the directories the walk itself holds, the roots and
// the runtime's own, the process then stays under 64 descriptors.
const frugalWindow = 20

func startSched(w *walker, workers int) *sched {
	quit := make(chan struct{})
	s := &sched{w: w, window: &semaphore{slots: FrugalSlots(walkWindow, frugalWindow, quit)}, quit: quit}
	s.cond.L = &s.mu
	for i := 0; i < workers; i++ {
		s.wg.Add(1)
		go s.work()
	}
	return s
}

// push offers a directory's subdirectories to the workers, the first on
// top: popping then follows the walk's own depth-first order.
func (s *sched) push(items []walkItem) {
	n := 0
	s.mu.Lock()
	for i := len(items) - 1; i >= 0; i-- {
		if items[i].sub != nil {
			s.stack = append(s.stack, items[i].sub)
			n++
		}
	}
	s.mu.Unlock()
	for ; n > 0; n-- {
		s.cond.Signal()
	}
}

func (s *sched) work() {
	defer s.wg.Done()
	var ctx walkCtx
	for {
		if !s.window.Acquire(s.quit) {
			return
		}
		s.mu.Lock()
		for len(s.stack) == 0 && !s.closed {
			s.cond.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			s.window.Release()
			return
		}
		j := s.stack[len(s.stack)-1]
		s.stack[len(s.stack)-1] = nil
		s.stack = s.stack[:len(s.stack)-1]
		s.mu.Unlock()
		if !j.state.CompareAndSwap(jobPending, jobRunning) {
			s.window.Release() // the walk took it, or gave it up
			continue
		}
		j.byWorker = true
		s.w.prepare(j, &ctx)
		j.state.Store(jobDone)
		close(j.done)
	}
}

// stop ends the workers; every job they prepared has been taken or
// discarded by then, as the walk takes or discards every job it made.
func (s *sched) stop() {
	s.mu.Lock()
	s.closed = true
	s.stack = nil
	s.mu.Unlock()
	close(s.quit)
	s.cond.Broadcast()
	s.wg.Wait()
}

// semaphore is a counting semaphore whose Acquire gives up on quit.
type semaphore struct{ slots chan struct{} }

func (s *semaphore) Acquire(quit <-chan struct{}) bool {
	select {
	case s.slots <- struct{}{}:
		return true
	case <-quit:
		return false
	}
}

func (s *semaphore) Release() { <-s.slots }
