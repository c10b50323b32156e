package main

import "golang.org/x/sys/unix"

// closeInherited closes every descriptor from 64 up that this process
// was started with. A fork sizes the child's descriptor table by the
// parent's highest open descriptor (64 slots at least), and the size
// decides whether fsbox's walks pay for growing it (see
// pkg/sandbox/fdtable.go): a harness that leaked a high descriptor (a
// terminal's bash keeps 255; some tool shells pass others on) would time
// every child with a large table, which no exec tool or sh -c gives.
// With these closed, fsbox and the rivals start as they do under sh -c or
// from a typical exec tool: with 64 slots.
func closeInherited() { _ = unix.CloseRange(64, ^uint(0), 0) }
