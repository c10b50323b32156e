// Command s3raw is the bench's whole-process rival for the s3-* rows:
// what a user writes with the AWS SDK for Go v2 and its default
// credential chain to stat, read, list or grep objects (rawops).
//
//	s3raw -bucket B [-endpoint URL] [-path-style] stat KEY
//	s3raw ... read KEY
//	s3raw ... ls PREFIX
//	s3raw ... grep RE PREFIX
//	s3raw ... edit KEY OLD NEW JOURNAL
//	s3raw ... patch OLD NEW JOURNAL KEY...
//
// grep exits 1 when nothing matches, as grep does.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"

	"github.com/fsbox/fsbox/internal/bench/s3raw/rawops"
)

func main() {
	bucket := flag.String("bucket", "", "the bucket")
	endpoint := flag.String("endpoint", "", "the S3 endpoint (default: AWS's)")
	pathStyle := flag.Bool("path-style", false, "path-style requests")
	flag.Parse()
	args := flag.Args()
	if *bucket == "" || len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: s3raw -bucket B [-endpoint URL] [-path-style] stat KEY | read KEY | ls PREFIX | grep RE PREFIX")
		os.Exit(2)
	}
	ctx := context.Background()
	c, err := rawops.New(ctx, *bucket, *endpoint, *pathStyle)
	if err != nil {
		fatal(err)
	}
	w := bufio.NewWriterSize(os.Stdout, 64<<10)
	switch args[0] {
	case "stat":
		err = c.Stat(ctx, w, args[1])
	case "read":
		err = c.Read(ctx, w, args[1])
	case "ls":
		err = c.Ls(ctx, w, args[1])
	case "grep":
		if len(args) < 3 {
			fatal(fmt.Errorf("grep RE PREFIX"))
		}
		re, rerr := regexp.Compile(args[1])
		if rerr != nil {
			fatal(rerr)
		}
		var n int
		n, err = c.Grep(ctx, w, re, args[2])
		if err == nil && n == 0 {
			w.Flush()
			os.Exit(1)
		}
	case "edit":
		if len(args) != 5 {
			fatal(fmt.Errorf("edit KEY OLD NEW JOURNAL"))
		}
		err = c.Edit(ctx, w, args[1], args[2], args[3], args[4])
	case "patch":
		if len(args) < 5 {
			fatal(fmt.Errorf("patch OLD NEW JOURNAL KEY..."))
		}
		err = c.Patch(ctx, w, args[4:], args[1], args[2], args[3])
	default:
		fatal(fmt.Errorf("unknown command %q", args[0]))
	}
	if err == nil {
		err = w.Flush()
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "s3raw:", err)
	os.Exit(2)
}
