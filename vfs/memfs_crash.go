package vfs

import (
	"bytes"
	"maps"
	"math/rand/v2"
	"slices"
)

// Crash returns a new MemFS holding only m's durable state: what a machine
// would find after losing power now. It starts from the root's durable
// entries and follows durable entries only; every file gets its durable
// contents, and files reached by several durable entries stay hard links of
// one inode. The new MemFS has no hook, no locks, no open files and an Ops
// count of zero.
//
// m is unchanged and stays usable; its open handles keep acting on m.
//
// Durable entries can in rare interleavings (unsynced renames of
// directories) name one directory twice or form a cycle. A directory is kept
// only at the first place a depth-first walk in name order reaches it, as no
// real filesystem can hold a directory twice.
func (m *MemFS) Crash() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crashLocked(nil)
}

// CrashKeep is Crash with torn writes: for each file whose current contents
// extend its durable contents (it was only appended to since its last
// Sync), the new MemFS keeps the durable contents plus a prefix, of random
// length chosen by rng, of the unsynced tail. This is what a disk may
// persist of writes in flight. Files rewritten or truncated since their last
// Sync keep exactly their durable contents, and directory entries are the
// durable ones, as for Crash.
//
// Files are visited in a fixed order, so the same rng seed gives the same
// result.
func (m *MemFS) CrashKeep(rng *rand.Rand) *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.crashLocked(rng)
}

// CrashAfter arms a crash point k mutating operations from now: when the
// (k+1)-th mutating operation from now on starts (before its hook runs), m
// captures what Crash would return at that moment, i.e. the state right
// after the next k mutating operations. CrashState returns the captured
// state. Arming again replaces the previous crash point; k < 0 disarms.
//
// k counts from the call, not from NewMemFS, so test setup done before
// arming does not shift it: a test measures its workload with Ops before and
// after one run, then re-runs it once per k with CrashAfter(k) armed just
// before the workload.
func (m *MemFS) CrashAfter(k int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.crash = nil
	if k >= 0 {
		m.crash = &crashPoint{after: m.ops + k}
	}
}

// CrashState returns the state captured by the crash point armed with
// CrashAfter, or, if that point was never reached (no more than k mutating
// operations followed the arming) or none is armed, what Crash returns now.
func (m *MemFS) CrashState() *MemFS {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.crash != nil && m.crash.state != nil {
		return m.crash.state
	}
	return m.crashLocked(nil)
}

// crashLocked builds the post-crash MemFS; see Crash and CrashKeep. rng is
// nil for Crash.
func (m *MemFS) crashLocked(rng *rand.Rand) *MemFS {
	c := &crashCopier{rng: rng, seen: map[*inode]*inode{}}
	out := NewMemFS()
	out.root = c.copy(m.root)
	return out
}

// crashCopier copies the durable tree of a MemFS. Its caller holds the
// source MemFS's lock.
type crashCopier struct {
	rng  *rand.Rand
	seen map[*inode]*inode // source inode -> its copy
}

// copy returns the post-crash copy of n, or nil if n is a directory already
// copied elsewhere in the tree.
func (c *crashCopier) copy(n *inode) *inode {
	if done, ok := c.seen[n]; ok {
		if n.dir {
			return nil
		}
		return done
	}
	if n.dir {
		d := newDirInode(n.perm, n.modTime)
		c.seen[n] = d
		for _, name := range slices.Sorted(maps.Keys(n.durableEntries)) {
			if child := c.copy(n.durableEntries[name]); child != nil {
				d.entries[name] = child
			}
		}
		d.durableEntries = maps.Clone(d.entries)
		return d
	}
	data := n.durable
	if c.rng != nil && len(n.data) > len(n.durable) && bytes.Equal(n.data[:len(n.durable)], n.durable) {
		if keep := c.rng.IntN(len(n.data) - len(n.durable) + 1); keep > 0 {
			data = slices.Clone(n.data[:len(n.durable)+keep])
		}
	}
	data = data[:len(data):len(data)]
	f := &inode{perm: n.perm, modTime: n.modTime, data: data, durable: data, shared: true}
	c.seen[n] = f
	return f
}

// SyncAll makes everything currently reachable from the root durable, as if
// every file and directory had been synced. It is meant for test setup
// (write fixtures, SyncAll, then start crashing) and bypasses the hook and
// the Ops count.
func (m *MemFS) SyncAll() {
	m.mu.Lock()
	defer m.mu.Unlock()
	seen := map[*inode]bool{}
	var walk func(n *inode)
	walk = func(n *inode) {
		if seen[n] {
			return
		}
		seen[n] = true
		n.syncLocked()
		for _, child := range n.entries {
			walk(child)
		}
	}
	walk(m.root)
}
