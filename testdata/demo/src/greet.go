package main

// TODO: localise
func greet(name string) string { return "hello, " + name }
