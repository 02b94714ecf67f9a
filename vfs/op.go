package vfs

import "strconv"

// Op names a filesystem operation. MemFS passes it to its hook before each
// operation so that a test can fail chosen operations.
type Op uint8

// The operations MemFS reports to its hook. The mutating ones (see
// Op.Mutating) are also counted by MemFS.Ops.
const (
	// OpCreate is Create, or OpenFile with os.O_CREATE or os.O_TRUNC.
	OpCreate Op = iota + 1
	// OpOpen is Open, or OpenFile without os.O_CREATE and os.O_TRUNC.
	OpOpen
	// OpRead is File.Read or File.ReadAt.
	OpRead
	// OpWrite is File.Write.
	OpWrite
	// OpSync is File.Sync.
	OpSync
	// OpTruncate is File.Truncate.
	OpTruncate
	// OpStat is FS.Stat or File.Stat.
	OpStat
	// OpReadDir is FS.ReadDir.
	OpReadDir
	// OpRemove is FS.Remove or FS.RemoveAll.
	OpRemove
	// OpRename is FS.Rename; the hook gets the new name.
	OpRename
	// OpLink is FS.Link; the hook gets the new name.
	OpLink
	// OpMkdir is FS.MkdirAll.
	OpMkdir
	// OpSyncDir is FS.SyncDir.
	OpSyncDir
	// OpMap is FS.Map.
	OpMap
	// OpLock is FS.Lock.
	OpLock
)

var opNames = [...]string{
	OpCreate:   "create",
	OpOpen:     "open",
	OpRead:     "read",
	OpWrite:    "write",
	OpSync:     "sync",
	OpTruncate: "truncate",
	OpStat:     "stat",
	OpReadDir:  "readdir",
	OpRemove:   "remove",
	OpRename:   "rename",
	OpLink:     "link",
	OpMkdir:    "mkdir",
	OpSyncDir:  "syncdir",
	OpMap:      "mmap",
	OpLock:     "lock",
}

// String returns the operation's lower-case name, e.g. "write". It is also
// the Op field of the *fs.PathError that MemFS returns for an injected error.
func (o Op) String() string {
	if int(o) < len(opNames) && opNames[o] != "" {
		return opNames[o]
	}
	return "op(" + strconv.Itoa(int(o)) + ")"
}

// Mutating reports whether the operation can change what a crash leaves
// behind: creating, writing, syncing, truncating, removing, renaming,
// linking, making directories, syncing directories and taking a lock (which
// may create the lock file).
func (o Op) Mutating() bool {
	switch o {
	case OpCreate, OpWrite, OpSync, OpTruncate, OpRemove, OpRename, OpLink,
		OpMkdir, OpSyncDir, OpLock:
		return true
	}
	return false
}
