//go:build unix && !linux

package sandbox

import "errors"

func exchange(a, b string) error { return errors.ErrUnsupported }
