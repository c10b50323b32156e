//go:build unix

package sandbox

import (
	"runtime"
	"sync"
	"testing"
)

// Test-only exports for the external tests (package sandbox_test), which
// drive the real commands of package ops against the swapper of
// race_test.go.

// RaceSwapper is raceSwapper: it flips work/name with work/name.alt.
type RaceSwapper = raceSwapper

// NewRaceSwapper swaps work/name with work/name.alt (both must exist).
func NewRaceSwapper(work, name string) *RaceSwapper {
	return &raceSwapper{work: work, name: name}
}

// Start runs the swapper until the returned stop is called, and returns
// once it has swapped at least once (or failed), so a call made right
// after runs against it. stop reports how many swaps it made in all and
// the error that ended this run early, if any.
func (sw *raceSwapper) Start() (stop func() (int64, error)) {
	ch := make(chan struct{})
	exited := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	sw.err = nil
	before := sw.swaps.Load()
	go func() { sw.run(ch, &wg); close(exited) }()
wait:
	for sw.swaps.Load() == before {
		select {
		case <-exited:
			break wait
		default:
			runtime.Gosched()
		}
	}
	return func() (int64, error) {
		close(ch)
		wg.Wait()
		return sw.swaps.Load(), sw.err
	}
}

// RaceSetup is raceSetup: a sandbox over a workdir whose esc flips with a
// symlink to ../outside and den with one to secrets (deny secrets/**).
func RaceSetup(t *testing.T) (*Sandbox, string, []*RaceSwapper) { return raceSetup(t) }

// RaceMarkers are the contents raceSetup puts in the outside and the
// denied files, and in the inside ones.
const (
	RaceOutside = outsideSecret
	RaceDenied  = raceDenied
	RaceInside  = raceInside
)

// Name is the swapped entry's name.
func (sw *raceSwapper) Name() string { return sw.name }
