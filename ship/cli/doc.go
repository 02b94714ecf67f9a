// Package cli holds the command-line part of block shipping: Command
// returns an "upload" command that uploads the blocks of a data directory
// to the bucket an objstore YAML file describes, in the form of the tool's
// commands (cmd/tsdb/cli.Command). prom/cmd/tsdb, the full tsdb tool,
// offers it as "tsdb upload"; ship/cmd/tsdb-ship is a small tool with it
// alone. The root module's build of tsdb (cmd/tsdb) does not have it: it
// would pull objstore's providers into the root module.
package cli
