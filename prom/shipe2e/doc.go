// Package shipe2e holds the end-to-end test of block shipping across
// modules (tests only): isotsdb writes blocks, ship's Shipper uploads them
// to a real S3 server (SeaweedFS, through ship/shiptest), and the blocks
// downloaded back through objstore are opened with Prometheus's
// tsdb.OpenDBReadOnly and with isotsdb, both of which must read exactly the
// source's samples. It lives in prom/ for Prometheus's TSDB.
//
// Like ship/'s S3 tests it needs TSDB_WEED (scripts/seaweedfs prints it)
// and fails without it, unless TSDB_NO_S3=1.
package shipe2e
