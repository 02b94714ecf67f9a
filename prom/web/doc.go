// Package promweb serves Prometheus's HTTP API (/api/v1/...) over an isotsdb
// database, using Prometheus's own API code (web/api/v1) so that parameters,
// the JSON envelope, error types and status codes, warnings and limits are
// exactly Prometheus's.
//
// New builds Prometheus's v1 API with PromQL's engine (promql.NewEngine)
// over promstorage.New(db) and registers it on a route.Router under
// /api/v1. What it serves:
//
//   - the read API: query, query_range, query_exemplars, series, labels,
//     label/<name>/values, format_query, parse_query, remote read (/read);
//   - status: status/tsdb (head statistics computed from the isotsdb head,
//     see below), status/buildinfo (isotsdb's module version and Go
//     version), status/runtimeinfo, status/flags (the Options as flags),
//     status/config (an empty configuration), status/tsdb/blocks (the
//     DB's blocks), status/walreplay (always done);
//   - the scrape-, rule- and alerting-related endpoints (targets,
//     scrape_pools, rules, alerts, alertmanagers, targets/metadata)
//     answer as a Prometheus without scrape targets, rules or
//     Alertmanagers does: empty lists;
//   - /api/v1/metadata, which Prometheus fills from its scrape targets,
//     lists the metadata stored in the DB (metadata.go), with
//     Prometheus's parameters, JSON and errors;
//   - unless Options.ReadOnly: the remote-write receiver (/api/v1/write,
//     remote-write 1.0 and 2.0 messages, as a Prometheus with both
//     accepted; 2.0's start times, inline metadata and exemplars are
//     stored) and the admin endpoints
//     (admin/tsdb/delete_series, clean_tombstones, snapshot). With
//     ReadOnly, /api/v1/write answers 404 and the admin endpoints fail
//     with errorType "unavailable", as in a Prometheus without
//     --web.enable-remote-write-receiver and --web.enable-admin-api.
//
// # Isolation
//
// Every query reads one isotsdb Querier, so it sees exactly the
// transactions committed before it started. Prometheus's remote-write
// handler opens one Appender per request, appends every sample of the
// request to it and then calls Commit, or Rollback as soon as an append
// fails (storage/remote/write_handler.go, writeHandler.write). That Appender
// is one isotsdb transaction here, so a request is applied whole or not at
// all: a query never sees part of a request, and a rejected request (an
// out-of-order or out-of-bounds sample: 400; a storage failure: 500) leaves
// nothing behind. As in Prometheus, a series with invalid labels (no
// metric name, a name or value that is not valid UTF-8, a label name
// twice) is dropped from the request and the rest of the request is
// stored (204): the request is not rejected.
//
// One difference from Prometheus follows: a request that holds, for one
// series, a sample older than or at the time of an earlier sample of the
// same request (out of order or duplicate within the request, e.g. the
// same series twice) is rejected whole here (400, nothing applied),
// because isotsdb's transaction rejects such a sample when it is
// appended. Prometheus's TSDB accepts it at append and drops it silently
// at Commit, so its receiver answers 204 having stored the rest of the
// request. Out-of-order and duplicate samples against samples already
// stored get 400 from both, with nothing applied.
//
// Remote write 2.0 allows partial writes, and Prometheus's 2.0 receiver
// makes them: a series or sample it cannot store (bad symbol references
// or labels, a series without samples, an out-of-order, duplicate,
// too-late or too-far-future sample, an invalid histogram) is skipped,
// the rest of the request is committed, and the answer is 400 with the
// counts stored in the X-Prometheus-Remote-Write-*-Written headers; only
// a storage failure (500) rolls everything back. The same happens here,
// the stored rest being still one transaction, so a query sees all of it
// or none. A sample out of order within the request is skipped here at
// append (400, the rest stored) where Prometheus drops it at Commit
// (204): both DBs end up holding the same samples.
//
// # Status
//
// status/tsdb reports the same figures Prometheus's head does (series
// count, time range, label-pair count and the top-N cardinalities per
// metric name, label name, label-value bytes and label pair), computed from
// the series DB.HeadSeries lists: the head's series with a sample visible
// now. A head series all of whose samples were deleted is therefore not
// counted, while Prometheus counts it until its head garbage-collects it.
// The head chunk count comes, as in Prometheus, from the
// prometheus_tsdb_head_chunks gauge of Options.Registerer (if it is also a
// prometheus.Gatherer, such as a *prometheus.Registry): open the DB with
// tsdb.Options.MetricsNamespace "prometheus" and the same registry to
// have it. Without the gauge, chunkCount is what Prometheus reports
// without it (int64 of NaN: -9223372036854775808 on amd64 and arm64).
//
// Label names and values (labels, label/<name>/values) are those of the
// series with samples a query can see: after admin/tsdb/delete_series
// removed all of a series' samples, its values are no longer listed,
// while Prometheus lists them until its head garbage-collects the series.
//
// The handler keeps no global state; everything it uses hangs off the
// value New returns.
package promweb
