// Package web serves isotsdb's admin and status HTTP API, shaped like
// Prometheus's /api/v1 endpoints of the same names so that existing tools
// and scripts work against it:
//
//	POST|PUT /api/v1/admin/tsdb/snapshot?skip_head=<bool>
//	POST|PUT /api/v1/admin/tsdb/delete_series?match[]=<selector>&start=<time>&end=<time>
//	POST|PUT /api/v1/admin/tsdb/clean_tombstones
//	GET      /api/v1/status/tsdb?limit=<n>
//
// Responses use Prometheus's JSON envelope: {"status":"success","data":...}
// or {"status":"error","errorType":...,"error":...}, with Prometheus's
// status codes: 400 and "bad_data" for bad input, 500 and "internal" when
// the database fails, 204 and no body for a successful delete_series or
// clean_tombstones. The admin endpoints answer only with
// Options.EnableAdmin; otherwise they fail with errorType "unavailable"
// and status 500, exactly as Prometheus does when started without
// --web.enable-admin-api. A method an endpoint does not take gets 405.
//
// Times are RFC 3339 or Unix seconds with an optional fraction, as in
// Prometheus; selectors are parsed with labels.ParseSelector.
//
// The handler works on an AdminDB, a small interface; FromDB adapts a
// *tsdb.DB to it.
package web
