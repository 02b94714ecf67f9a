// Package scrape ingests scrapes of Prometheus targets into an isotsdb
// database, one transaction per scrape, as Prometheus's scrape loop
// appends them to its TSDB: an embedding server makes one call per scrape.
//
//	s := scrape.New(db, scrape.Options{Labels: labels.FromStrings("job", "app", "instance", "host:9100")})
//	res, err := s.ScrapeGatherer(ctx, registry, time.Now())      // a client_golang registry
//	res, err = s.ScrapeExposition(ctx, body, contentType, time.Now()) // a fetched exposition
//	res, err = s.MarkStale(ctx, time.Now())                       // the target is gone
//
// Each call commits the whole scrape at once, or nothing of it: the float
// samples and native histograms (parsed by Prometheus's model/textparse, so
// text, OpenMetrics and protobuf expositions read as Prometheus reads
// them), their exemplars (tsdb.Appender.AppendExemplar), the metric
// metadata (tsdb.Appender.UpdateMetadata), stale markers for the series
// that vanished and the report series (up, scrape_duration_seconds, ...).
// A Querier never sees part of a scrape.
//
// The Scraper keeps a ref cache (a series seen before costs a map lookup
// and an Append by ref) and the series of the last scrape, for staleness;
// after a restart it finds its target's series in the head
// (tsdb.DB.HeadSeries). See Scraper for staleness, failed scrapes, and
// what matches Prometheus and what is not implemented.
package scrape
