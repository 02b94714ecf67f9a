// Package shiptest runs a real S3 server, SeaweedFS, on loopback for
// end-to-end tests of block shipping: ship/'s own and prom/'s (which open
// the shipped blocks with Prometheus's TSDB). It is for tests only; it
// imports testing.
//
// The server binary is the one scripts/seaweedfs builds, named by the
// environment variable TSDB_WEED. Without it a test calling StartWeed
// fails, so that CI never skips the S3 tests unnoticed, unless TSDB_NO_S3=1
// says to skip them.
package shiptest
