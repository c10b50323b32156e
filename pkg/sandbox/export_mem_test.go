//go:build unix

package sandbox

import "github.com/fsbox/fsbox/pkg/policy"

// Test-only exports for the external tests (package sandbox_test): an
// object root over memObjects, so the door tables that drive the real
// commands run on it too.

// MemStore is an in-memory object store (memObjects).
type MemStore struct{ m *memObjects }

// NewMemStore holds files: a key (a path below the root) -> content; a
// key ending in "/" is an empty directory.
func NewMemStore(files map[string]string) *MemStore {
	return &MemStore{newMemObjects(bytesOf(files))}
}

// Files is what the store holds: key -> content.
func (s *MemStore) Files() map[string][]byte { return s.m.Files() }

// NewWithStores is New with each root whose path is a key of stores an
// object root over that store.
func NewWithStores(p *policy.Policy, home string, stores map[string]*MemStore) (*Sandbox, error) {
	objs := map[string]ObjectStore{}
	for dir, st := range stores {
		objs[dir] = st.m
	}
	return newSandboxOver(p, home, objs)
}
