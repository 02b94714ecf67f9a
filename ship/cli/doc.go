// Package cli holds the command-line part of block shipping, so that any
// kingpin application can offer it: Register adds an "upload" command that
// uploads the blocks of a data directory to the bucket an objstore YAML
// file describes. The root module's tsdb tool does not import it (it
// would pull in objstore's providers); ship/cmd/tsdb-ship does.
package cli
