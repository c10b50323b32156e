package sandbox

import "path/filepath"

func fallbackPath(lexical string) (string, error) {
	return filepath.EvalSymlinks(lexical)
}
