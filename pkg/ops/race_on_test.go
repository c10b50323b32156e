//go:build race

package ops

// raceOn: the race detector is on, and hot loops run some ten times
// slower: the largest tests take smaller inputs.
const raceOn = true
