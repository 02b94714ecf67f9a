// Package thanosmeta is a test-only nested module: its test parses the
// meta.json the shipper uploads with Thanos's own
// github.com/thanos-io/thanos/pkg/block/metadata. It has its own go.mod
// because Thanos pins a Prometheus (v0.309.1 for Thanos v0.42.4) other
// than prom/'s (v0.316.0), and ship/ itself stays free of Thanos's
// dependencies. Thanos v0.42.5, the newest, requires Go 1.26.10; v0.42.4
// builds with Go 1.26.8.
package thanosmeta
