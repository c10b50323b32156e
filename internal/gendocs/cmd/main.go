// Command gendocs writes the generated documentation (see package gendocs).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/fsbox/fsbox/internal/gendocs"
)

func main() {
	root := flag.String("root", ".", "repository root")
	flag.Parse()
	if err := gendocs.Run(*root, true); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
