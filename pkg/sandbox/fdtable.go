package sandbox

import (
	"sync"
	"sync/atomic"
)

// The descriptor table, and why a walk minds its size.
//
// A process's descriptor table starts as large as its parent's was at the
// fork (at least 64 slots), and exec keeps it. Growing it in a process
// whose table several threads share (a Go process always has several)
// waits for an RCU grace period, about 10 ms, and every thread that needs
// a slot past the old end waits with it. The sh of `sh -c CMD`, like most
// shells in a pipeline and most exec tools, forks CMD with descriptors
// 0-2 open: fsbox then starts with 64 slots, and a parallel walk, which
// holds a directory open for every directory it reads ahead, used to
// cross 64 early and stall (issue 18: find 31 ms under sh -c, 19 ms when
// exec'd; internal/bench/shrepro reproduces it without fsbox).
//
// So a walk keeps few directories open ahead of it (frugalWindow) until
// the table has grown. find stays that way: measured on a 12.8k-file tree
// it is as fast with 20 directories read ahead as with 64. grep, whose
// queue of files holds their directories open too, asks for a larger
// table once its queue fills (GrowDescriptors): one goroutine takes a slot
// past 255, waits out the grace period alone, and gives the slot back,
// while the search goes on within 64 descriptors; then the walk and the
// queue widen to their full read-ahead. (A table that is already large
// grows at once.) A small search never asks: a process that ends while a
// growth is waiting would wait for it.

var descriptors = struct {
	start sync.Once
	grown chan struct{} // closed once the table has room for a full read-ahead
}{grown: make(chan struct{})}

func init() {
	if !growCostly {
		close(descriptors.grown)
	}
}

// DescriptorsGrown is closed once the descriptor table has room for a
// full read-ahead (at once where growing it costs nothing).
func DescriptorsGrown() <-chan struct{} { return descriptors.grown }

// GrowDescriptors starts growing the descriptor table, once per process,
// in the background; DescriptorsGrown says when it is done.
func GrowDescriptors() {
	if !growCostly {
		return
	}
	descriptors.start.Do(func() {
		go func() {
			growTable()
			close(descriptors.grown)
		}()
	})
}

// FrugalSlots returns a counting semaphore of n slots (a send takes one,
// a receive gives one back) of which all but frugal are held back until
// the descriptor table has grown, or done is closed: the read-ahead of a
// walk, and of anything that keeps walked entries (and so their
// directories) open, as grep's queue does.
func FrugalSlots(n, frugal int, done <-chan struct{}) chan struct{} {
	slots := make(chan struct{}, n)
	if descriptorsGrown() || frugal >= n {
		return slots
	}
	held := n - frugal
	for range held {
		slots <- struct{}{}
	}
	go func() {
		select {
		case <-descriptors.grown:
			for range held {
				<-slots
			}
		case <-done:
		}
	}()
	return slots
}

// targetsHeld counts the write targets open in the process: each holds
// three descriptors (its directory twice, and the file). A call that
// holds more than manyTargets at once (a patch of many files, an undo)
// grows the table while it is still planning, so that it waits out one
// grace period in the background rather than two in its way (64 to 128
// to 256 slots).
var targetsHeld atomic.Int64

const manyTargets = 12

func holdTarget() {
	if targetsHeld.Add(1) > manyTargets {
		GrowDescriptors()
	}
}

func releaseTarget() { targetsHeld.Add(-1) }

// descriptorsGrown reports whether DescriptorsGrown is closed.
func descriptorsGrown() bool {
	select {
	case <-descriptors.grown:
		return true
	default:
		return false
	}
}
