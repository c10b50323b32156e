//go:build !race

package ops

// raceOn: see race_on_test.go.
const raceOn = false
