//go:build linux

// Command shrepro reproduces issue 18 without fsbox: a multi-threaded
// process whose descriptor table has to grow past its first 64 slots
// stalls for an RCU grace period (expand_fdtable calls synchronize_rcu
// once the table is shared by more than one thread: a Go process always
// is). How large the table starts depends on who forked the process: a
// fork copies a table sized to the parent's highest open descriptor
// (at least 64 slots), and exec keeps it. Python's subprocess (which
// forks with the caller's descriptors still open, then closes them)
// hands `sh -c 'exec CMD'` a table as large as python's own, but the
// `sh` of `sh -c CMD` forks CMD with only 0-2 open: a 64-slot table.
// (The dev VM's tool shell leaks fds 10 and 251 into python, bash and Go
// harnesses alike: python's own table is 256 slots; bash's and Go's
// children keep fd 251 open, which is why they never showed the loss.)
//
// Run (from the repository root):
//
//	go run ./internal/bench/shrepro            # compares the two starts
//	go run ./internal/bench/shrepro -n 31 -files 40
//
// It starts itself as a child N times each way: "small" (forked by a
// process with only fds 0-2 open, as sh does) and "large" (an fd >= 64
// open at exec, closed at once: the table already has 128 slots), and
// prints the child's median wall time and slowest open(2).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 21, "runs of each kind")
	files := flag.Int("files", 40, "descriptors each of 2 workers holds")
	child := flag.Bool("child", false, "")
	flag.Parse()
	if *child {
		runChild(*files)
		return
	}
	// Close what this process inherited above its own few descriptors,
	// so its children's tables are sized by what it opens (as sh's are).
	syscall.Syscall(436 /* close_range */, 10, ^uintptr(0), 0)
	self, _ := os.Executable()
	for _, kind := range []string{"small", "large", "small", "large"} {
		var walls, opens []time.Duration
		for i := 0; i < *n; i++ {
			cmd := exec.Command(self, "-child", "-files", strconv.Itoa(*files))
			cmd.Stderr = os.Stderr
			if kind == "large" {
				for len(cmd.ExtraFiles) < 62 { // fds 3..64: a 128-slot table
					cmd.ExtraFiles = append(cmd.ExtraFiles, os.Stdin)
				}
			}
			out, err := cmd.Output()
			if err != nil {
				panic(err)
			}
			var w, o int64
			fmt.Sscan(string(out), &w, &o)
			walls, opens = append(walls, time.Duration(w)), append(opens, time.Duration(o))
		}
		slices.Sort(walls)
		slices.Sort(opens)
		fmt.Printf("%-6s table: child wall median %6.2f ms, slowest open median %6.2f ms\n",
			kind, ms(walls[len(walls)/2]), ms(opens[len(opens)/2]))
	}
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// runChild: 2 workers each open files descriptors (holding them), with
// 100 µs of work between opens: about 2*files descriptors at the peak.
func runChild(files int) {
	syscall.Syscall(436, 3, ^uintptr(0), 0) // a "large" start's fds 3..64
	start := time.Now()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var slowest time.Duration
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var held []*os.File
			for i := 0; i < files; i++ {
				t := time.Now()
				f, err := os.Open(os.DevNull)
				if err != nil {
					panic(err)
				}
				d := time.Since(t)
				mu.Lock()
				slowest = max(slowest, d)
				mu.Unlock()
				held = append(held, f)
				for s := time.Now(); time.Since(s) < 100*time.Microsecond; {
				}
			}
			for _, f := range held {
				f.Close()
			}
		}()
	}
	wg.Wait()
	fmt.Println(int64(time.Since(start)), int64(slowest))
}
