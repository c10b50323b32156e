//go:build unix

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// The paging rows (issue 29): grep over a tree of exactly pagesMatches
// matching lines, under a policy whose max_result_bytes is 64 KiB, paged
// to the end with --cursor. The targets: the 100th page costs at
// most 2× the first (no re-scan of what lies before the cursor), and all
// pages together at most 1.5× the unbounded grep plus one process start
// per page.
//
// One interleaved loop times six sides, each its own process (or chain of
// processes), exec'd directly with JSON on stdout:
//
//	unbounded  fsbox --config DATA.pages-unbounded.toml grep -n needle pages-100k
//	first      fsbox --config DATA.pages-64KiB.toml grep -n needle pages-100k
//	page100    the same with --cursor C99 (page 99's next_cursor)
//	all        the first page, then --cursor of each page's next_cursor until none comes
//	start      fsbox --config DATA.pages-64KiB.toml stat pages-100k (a process start with the policy and the sandbox)
//	version    fsbox --version (the bare process start)
//
// Each side runs until it has had its budget and -min-runs (as the other
// rows' sides do), the sides taking turns in a round-robin whose first
// side moves each round. The all side captures each page's stdout through
// a pipe to take its next_cursor (a search for the last "next_cursor" key:
// microseconds); the other sides write to /dev/null. Before timing, the
// chain is walked once: each page but the last must exit 9 with a
// next_cursor, the last exit 0 without one, and the pages' matches, put
// together, must be the unbounded grep's, item for item (their count and a
// SHA-256 of their JSON), and pagesMatches of them; else the rows report
// an error.
//
// It makes two rows: grep-pages-100k-page100 (fsbox: the 100th page,
// rival: the first page; target <= 2×) and grep-pages-100k-all (fsbox:
// all pages, rival: the unbounded grep's median plus pages × start's
// median; target <= 1.5×). -shell does not run them under sh -c: a chain
// that reads each page's cursor cannot be a CMD | cat pipeline.
const (
	dirPages     = "pages-100k"
	pagesNeedle  = "needle"
	pagesMatches = 100_000
	pagesBudget  = 64 << 10 // max_result_bytes
	pagesNth     = 100      // the page timed against the first

	pagesDirs       = 200
	pagesFiles      = 10  // per directory
	pagesFileLines  = 200 // per small file
	pagesFileHits   = 48  // matching lines per small file
	pagesBigFiles   = 4   // big log files, in directories spread over the walk
	pagesBigLines   = 140_000
	pagesBigHits    = 1_000 // matching lines per big file, one every pagesBigLines/pagesBigHits
	pagesRowPage100 = "grep-pages-100k-page100"
	pagesRowAll     = "grep-pages-100k-all"
	pagesTarget100  = 2.0
	pagesTargetAll  = 1.5
)

// pagesRowNames are the paging rows, in report order; -only selects among
// them (a match of either runs the one loop that times both).
var pagesRowNames = []string{pagesRowPage100, pagesRowAll}

// The two policies: the same limits but for the byte budget. max_results
// is raised, else its default (10,000 items) would cut first.
var (
	pagesUnbounded = policy{"pages-unbounded", "[limits]\nmax_results = 1000000000\n"}
	pagesPaged     = policy{"pages-64KiB", "[limits]\nmax_results = 1000000000\nmax_result_bytes = " + strconv.Itoa(pagesBudget) + "\n"}
)

func init() {
	if pagesDirs*pagesFiles*pagesFileHits+pagesBigFiles*pagesBigHits != pagesMatches {
		panic("pages: the tree's layout does not add up to pagesMatches")
	}
}

// pagesSelected is the paging rows -only selects.
func pagesSelected(cfg config) []string {
	var names []string
	for _, n := range pagesRowNames {
		if cfg.only == nil || cfg.only.MatchString(n) {
			names = append(names, n)
		}
	}
	return names
}

// pagesArgv is the grep every side but start and version runs.
func pagesArgv() []string { return []string{"grep", "-n", pagesNeedle, dirPages} }

// genPages writes the paging tree: pagesDirs directories dNNN of
// pagesFiles small files fNN.txt, each of pagesFileLines lines of which
// pagesFileHits (at places drawn per file) hold pagesNeedle at a random
// word position, the rest words of the bench's list (none holding it);
// and pagesBigFiles directories (spread over the walk) also hold a
// zz-big.log of pagesBigLines log lines (about 8 MiB) with pagesBigHits
// matching lines evenly spaced. Exactly pagesMatches matching lines.
func genPages(path string, _ int64) (int64, error) {
	if err := os.RemoveAll(path); err != nil {
		return 0, err
	}
	r := &rng{s: 0x9a9e5}
	var lines int64
	sentence := func(b []byte, needle bool) []byte {
		n := 3 + r.intn(14)
		at := -1
		if needle {
			at = r.intn(n + 1)
		}
		for i := 0; i <= n; i++ {
			if i > 0 {
				b = append(b, ' ')
			}
			if i == at {
				b = append(b, pagesNeedle...)
			} else {
				b = append(b, r.pick(words)...)
			}
		}
		return append(b, '\n')
	}
	idx := make([]int, pagesFileLines)
	hit := make([]bool, pagesFileLines)
	var buf []byte
	for d := range pagesDirs {
		dir := filepath.Join(path, fmt.Sprintf("d%03d", d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return 0, err
		}
		for f := range pagesFiles {
			// pagesFileHits distinct lines: a partial Fisher-Yates shuffle.
			for i := range idx {
				idx[i], hit[i] = i, false
			}
			for i := range pagesFileHits {
				j := i + r.intn(pagesFileLines-i)
				idx[i], idx[j] = idx[j], idx[i]
				hit[idx[i]] = true
			}
			buf = buf[:0]
			for i := range pagesFileLines {
				buf = sentence(buf, hit[i])
			}
			lines += pagesFileLines
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%02d.txt", f)), buf, 0o644); err != nil {
				return 0, err
			}
		}
		// The big files: in directories 24, 74, 124 and 174 of 200.
		if (d+pagesDirs/pagesBigFiles/2)%(pagesDirs/pagesBigFiles) == pagesDirs/pagesBigFiles-1 {
			buf = buf[:0]
			every := pagesBigLines / pagesBigHits
			for i := range pagesBigLines {
				buf = fmt.Appendf(buf, "2025-01-01T00:%02d:%02d.%03dZ INFO [%s] ", i/60000%60, i/1000%60, i%1000, r.pick(services))
				buf = sentence(buf, i%every == every/2)
			}
			lines += pagesBigLines
			if err := os.WriteFile(filepath.Join(dir, "zz-big.log"), buf, 0o644); err != nil {
				return 0, err
			}
		}
	}
	return lines, nil
}

// pageOut is what the bench reads of a grep page.
type pageOut struct {
	Matches    []json.RawMessage `json:"matches"`
	Truncated  bool              `json:"truncated"`
	Limit      string            `json:"limit"`
	NextCursor string            `json:"next_cursor"`
}

// pagesChecked is the chain walked once, untimed: the page count, the
// cursor that gives page pagesNth, and the matches put together.
type pagesChecked struct {
	pages    int
	cursor   string // page pagesNth-1's next_cursor
	matches  int
	sum      [32]byte
	firstLen int // bytes of the first page's matches, to report
}

// runPage runs one grep page: with cursor when it is not "", its stdout
// into out. exit is its exit status: 0, 1 or 9 (others are an error, as
// is a run the guard kills, which wraps errKilled).
func runPage(p proc, cursor string, out *bytes.Buffer, g guard) (sample, int, error) {
	argv := p.argv
	if cursor != "" {
		argv = append(slices.Clone(p.argv), "--cursor", cursor)
	}
	var errb bytes.Buffer
	cmd := &exec.Cmd{Path: p.path, Args: argv, Dir: p.dir, Env: p.env, Stdout: out, Stderr: &errb}
	s, err := g.run(cmd)
	if s.killed != "" {
		return s, 0, fmt.Errorf("%s: %w (%s)", showArgv(argv), errKilled, s.killed)
	}
	exit := 0
	if cmd.ProcessState != nil {
		exit = cmd.ProcessState.ExitCode()
	}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && (exit == 1 || exit == 9)) {
		return s, exit, fmt.Errorf("%s: %v: %s", showArgv(argv), err, firstLine(errb.String()))
	}
	return s, exit, nil
}

// hashMatches adds each item to h's input as its JSON and a newline.
func hashMatches(dst []byte, items []json.RawMessage) []byte {
	for _, m := range items {
		dst = append(dst, m...)
		dst = append(dst, '\n')
	}
	return dst
}

// walkPages follows the chain once from the first page, checking each
// page and putting the matches together.
func walkPages(p proc, g guard) (pagesChecked, error) {
	var c pagesChecked
	var all []byte
	cursor := ""
	for {
		var out bytes.Buffer
		_, exit, err := runPage(p, cursor, &out, g)
		if err != nil {
			return c, err
		}
		var pg pageOut
		if err := json.Unmarshal(out.Bytes(), &pg); err != nil {
			return c, fmt.Errorf("page %d: %v", c.pages+1, err)
		}
		c.pages++
		if c.pages == 1 {
			c.firstLen = out.Len()
		}
		c.matches += len(pg.Matches)
		all = hashMatches(all, pg.Matches)
		if len(pg.Matches) == 0 {
			return c, fmt.Errorf("page %d has no matches", c.pages)
		}
		if pg.NextCursor == "" {
			if exit != 0 || pg.Truncated {
				return c, fmt.Errorf("the last page (%d) exited %d, truncated %v, with no next_cursor", c.pages, exit, pg.Truncated)
			}
			break
		}
		if exit != 9 || pg.Limit != "max_result_bytes" {
			return c, fmt.Errorf("page %d has a next_cursor but exited %d with limit %q (want 9, max_result_bytes)", c.pages, exit, pg.Limit)
		}
		if c.pages == pagesNth-1 {
			c.cursor = pg.NextCursor
		}
		if c.pages > pagesMatches {
			return c, errors.New("more pages than matches: the cursor does not advance")
		}
		cursor = pg.NextCursor
	}
	c.sum = sha256.Sum256(all)
	return c, nil
}

// nextCursor takes the next_cursor out of a page's JSON without decoding
// the rest: the summary's keys follow the matches, so the key's last
// occurrence is the summary's (a match's text is JSON-escaped, so it
// cannot hold the key with its quotes unescaped).
func nextCursor(out []byte) (string, bool) {
	key := []byte(`"next_cursor":"`)
	i := bytes.LastIndex(out, key)
	if i < 0 {
		return "", false
	}
	rest := out[i+len(key):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return "", false
	}
	return string(rest[:j]), true
}

// chain runs all pages, following next_cursor, and returns the time of
// the whole (the processes and the driver's work between them) and the
// page count.
func chain(p proc, g guard) (sample, int, error) {
	t0 := time.Now()
	var s sample
	pages := 0
	cursor := ""
	var out bytes.Buffer
	for {
		out.Reset()
		ps, exit, err := runPage(p, cursor, &out, g)
		if err != nil {
			return s, pages, err
		}
		s.rssKiB = max(s.rssKiB, ps.rssKiB)
		pages++
		c, ok := nextCursor(out.Bytes())
		if !ok {
			if exit != 0 {
				return s, pages, fmt.Errorf("page %d exited %d without a next_cursor", pages, exit)
			}
			break
		}
		if pages > pagesMatches {
			return s, pages, errors.New("more pages than matches: the cursor does not advance")
		}
		cursor = c
	}
	s.wall = time.Since(t0)
	return s, pages, nil
}

// benchPages measures the paging rows.
func benchPages(cfg config, dir, fsbox string, fsboxEnv []string, devnull *os.File, rss *rssMeter, rows []string) []result {
	unbArgs := append([]string{"--config", writePolicy(dir, pagesUnbounded)}, pagesArgv()...)
	pagedConfig := writePolicy(dir, pagesPaged)
	pagedArgs := append([]string{"--config", pagedConfig}, pagesArgv()...)
	mk := func(args ...string) proc {
		return proc{path: fsbox, argv: append([]string{fsbox}, args...), dir: dir, env: slices.Clone(fsboxEnv)}
	}
	unb, paged := mk(unbArgs...), mk(pagedArgs...)
	start, version := mk("--config", pagedConfig, "stat", dirPages), mk("--version")

	results := make([]result, len(rows))
	for i, n := range rows {
		results[i] = result{Name: n}
		switch n {
		case pagesRowPage100:
			results[i].FsboxArgv = append([]string{"fsbox"}, append(pagesArgv(), "--cursor", fmt.Sprintf("<page %d's next_cursor>", pagesNth-1))...)
			results[i].RivalArgv = append([]string{"fsbox"}, pagesArgv()...)
			results[i].RatioTarget = pagesTarget100
		case pagesRowAll:
			results[i].FsboxArgv = append([]string{"fsbox"}, append(pagesArgv(), "[--cursor <each page's next_cursor>]")...)
			results[i].RivalArgv = append(append([]string{"fsbox"}, pagesArgv()...), "(under "+pagesUnbounded.name+")", "+", "PAGES", "×", "fsbox", "stat", dirPages)
			results[i].RatioTarget = pagesTargetAll
		}
		if cfg.baseline != "" {
			results[i].BaselineError = "baseline: not run (the grep-pages rows time -fsbox alone)"
		}
	}
	fail := func(err error) []result {
		for i := range results {
			results[i].Error = err.Error()
		}
		return results
	}

	// Warm-up and checks: the unbounded grep, and the chain walked once.
	progress("== grep-pages: %s, paged by %d bytes (exec'd directly)", showArgv(append([]string{"fsbox"}, pagesArgv()...)), pagesBudget)
	var out bytes.Buffer
	if _, exit, err := runPage(unb, "", &out, cfg.guard); err != nil {
		return fail(err)
	} else if exit != 0 {
		return fail(fmt.Errorf("the unbounded grep exited %d", exit))
	}
	var whole pageOut
	if err := json.Unmarshal(out.Bytes(), &whole); err != nil {
		return fail(fmt.Errorf("the unbounded grep: %v", err))
	}
	if whole.NextCursor != "" || whole.Truncated {
		return fail(fmt.Errorf("the unbounded grep was cut (limit %q)", whole.Limit))
	}
	if len(whole.Matches) != pagesMatches {
		return fail(fmt.Errorf("the unbounded grep found %d matches, not %d: the data is not what genPages makes", len(whole.Matches), pagesMatches))
	}
	wholeSum := sha256.Sum256(hashMatches(nil, whole.Matches))
	wholeBytes := out.Len()
	whole.Matches = nil
	ck, err := walkPages(paged, cfg.guard)
	if err != nil {
		return fail(err)
	}
	if ck.matches != pagesMatches || ck.sum != wholeSum {
		return fail(fmt.Errorf("the %d pages hold %d matches (SHA-256 %x), the unbounded grep %d (%x): the pages do not put together to the whole",
			ck.pages, ck.matches, ck.sum[:8], pagesMatches, wholeSum[:8]))
	}
	if ck.pages < pagesNth {
		return fail(fmt.Errorf("only %d pages: no page %d to time", ck.pages, pagesNth))
	}
	progress("   %d matches in %d pages (the first %d bytes; the whole %d bytes), item for item the unbounded grep's (SHA-256 %x…)",
		ck.matches, ck.pages, ck.firstLen, wholeBytes, wholeSum[:8])
	nth := paged
	nth.argv = append(slices.Clone(paged.argv), "--cursor", ck.cursor)
	for i := range results {
		if results[i].Name == pagesRowAll {
			results[i].RivalArgv[slices.Index(results[i].RivalArgv, "PAGES")] = strconv.Itoa(ck.pages)
		}
	}

	// The sides, timed in turn.
	const (
		sUnb = iota
		sFirst
		sNth
		sAll
		sStart
		sVersion
		nSides
	)
	runOnce := func(side int) (sample, error) {
		switch side {
		case sAll:
			s, pages, err := chain(paged, cfg.guard)
			if err == nil && pages != ck.pages {
				err = fmt.Errorf("the chain ran %d pages this time, %d before", pages, ck.pages)
			}
			return s, err
		case sUnb:
			return unb.run(devnull, devnull, nil, cfg.guard)
		case sFirst:
			return paged.run(devnull, devnull, []int{9}, cfg.guard)
		case sNth:
			return nth.run(devnull, devnull, []int{9}, cfg.guard)
		case sStart:
			return start.run(devnull, devnull, nil, cfg.guard)
		}
		return version.run(devnull, devnull, nil, cfg.guard)
	}
	// One untimed run of each side (the page cache, the binary's pages).
	for side := range nSides {
		if _, err := runOnce(side); err != nil {
			return fail(err)
		}
	}
	samples := make([][]sample, nSides)
	spent := make([]time.Duration, nSides)
	timeout := cfg.guard.timeout
	due := func(i int) bool {
		n := len(samples[i])
		if n >= cfg.maxRuns || (n > 0 && timeout > 0 && spent[i] >= timeout) {
			return false
		}
		return n < cfg.minRuns || spent[i] < cfg.budget
	}
	for round := 0; ; round++ {
		busy := false
		for k := range nSides {
			i := (k + round) % nSides
			if !due(i) {
				continue
			}
			busy = true
			s, err := runOnce(i)
			if errors.Is(err, errKilled) {
				return fail(fmt.Errorf("a run was killed (%s) after %v", s.killed, s.wall.Round(time.Millisecond)))
			}
			if err != nil {
				return fail(err)
			}
			samples[i] = append(samples[i], s)
			spent[i] += s.wall
		}
		if !busy {
			break
		}
	}
	st := make([]*stats, nSides)
	for i := range st {
		st[i] = summarize(samples[i])
	}
	// The rival of the all row: the unbounded grep plus a process start
	// per page, quantile by quantile.
	sum := func(a, b float64) float64 { return math.Round((a+float64(ck.pages)*b)*1000) / 1000 }
	u, s := st[sUnb], st[sStart]
	target := &stats{Runs: min(u.Runs, s.Runs), MedianMs: sum(u.MedianMs, s.MedianMs), MinMs: sum(u.MinMs, s.MinMs),
		P25Ms: sum(u.P25Ms, s.P25Ms), P75Ms: sum(u.P75Ms, s.P75Ms), MaxMs: sum(u.MaxMs, s.MaxMs)}
	ratioAllVersion := st[sAll].MedianMs / (u.MedianMs + float64(ck.pages)*st[sVersion].MedianMs)
	parts := fmt.Sprintf("%d pages of %d matches; unbounded grep %s, first page %s, page %d %s, all %s; start (stat) %s, --version %s",
		ck.pages, ck.matches, dur(u.MedianMs), dur(st[sFirst].MedianMs), pagesNth, dur(st[sNth].MedianMs), dur(st[sAll].MedianMs), dur(s.MedianMs), dur(st[sVersion].MedianMs))

	for i := range results {
		res := &results[i]
		switch res.Name {
		case pagesRowPage100:
			res.Fsbox, res.Rival = st[sNth], st[sFirst]
			res.Note = fmt.Sprintf("page %d vs the first; exec'd directly; %s", pagesNth, parts)
			if rss.time != "" {
				if k, err := rss.peak(nth, devnull, []int{9}, rss.runs, cfg.guard); err == nil {
					res.Fsbox.PeakRSSKiB, res.Fsbox.RSSExact = k, true
				}
			}
			if res.Fsbox.PeakRSSKiB == 0 {
				res.Fsbox.PeakRSSKiB = res.Fsbox.DirectRSSKiB
			}
		case pagesRowAll:
			res.Fsbox, res.Rival = st[sAll], target
			res.Note = fmt.Sprintf("all %d pages vs unbounded + %d × start (with --version as the start: %.2fx); exec'd directly; pages' matches = the unbounded grep's (count, SHA-256)",
				ck.pages, ck.pages, ratioAllVersion)
			res.Fsbox.PeakRSSKiB = res.Fsbox.DirectRSSKiB // the largest of the pages', an upper bound (see rssMeter)
		}
		res.Ratio = math.Round(res.Fsbox.MedianMs/res.Rival.MedianMs*1000) / 1000
		pass := res.Ratio <= res.RatioTarget
		res.RatioPass = &pass
	}
	return results
}
