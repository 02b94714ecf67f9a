// Package promstorage makes an isotsdb database usable wherever Prometheus
// expects a storage.Storage: the PromQL engine, rule evaluation, the HTTP
// API's read paths, remote-read servers.
//
// # Reads
//
// Storage.Querier opens exactly one isotsdb Querier, so everything a
// Prometheus Querier returns (every Select, LabelValues and LabelNames made
// through it) comes from one isolated snapshot: a PromQL query evaluates
// over the commits that had completed when the engine opened its Querier,
// and never over half of a scrape. Select honours SelectHints (Start/End
// clip the samples to the selector's range; Limit, ShardCount/ShardIndex and
// Func "series" behave as in Prometheus's TSDB). isotsdb always returns
// series sorted, so sortSeries costs nothing. Matchers keep Prometheus's
// semantics (fully anchored regexps in which '.' matches newlines); the one
// Prometheus matcher that cannot be translated, an alternation of literals
// one of which is not valid UTF-8, makes Select fail rather than match
// differently.
//
// # Writes
//
// Storage.Appender and Storage.AppenderV2 return one isotsdb Appender each:
// a Prometheus transaction is an isotsdb transaction. Float samples and
// native histograms (integer and float, exponential and custom buckets) are
// stored; histograms are converted (FromPromHistogram,
// FromPromFloatHistogram), so the caller may reuse them after the call.
// (ErrHistogramsUnsupported, with which earlier versions rejected
// histograms, is gone.)
// AppenderV2 stores each sample's start timestamp with it
// (tsdb.Appender.AppendST), and the queriers' iterators return it from
// AtST. storage.SeriesRef and isotsdb's SeriesRef are the same number.
//
// Exemplars are stored when the DB keeps them (tsdb.Options.MaxExemplars,
// DB.SetMaxExemplars; off by default, while Prometheus's flag defaults to
// 100,000): Appender.AppendExemplar and AppenderV2's opts.Exemplars
// buffer them in the transaction, and Commit stores them with its
// samples, isolated like them. The errors match Prometheus's
// (storage.ErrOutOfOrderExemplar, ErrDuplicateExemplar,
// ErrExemplarLabelLength, ErrExemplarsDisabled) as well as isotsdb's, so
// Prometheus's scrape loop treats them as it treats its own TSDB's;
// AppenderV2 drops duplicates and exemplars while they are off silently
// and reports other rejections in a storage.AppendPartialError, as
// Prometheus's head does. Storage is a storage.ExemplarQueryable: its
// ExemplarQuerier sees the commits completed before it was made.
// Storage.ApplyConfig applies storage.exemplars.max_exemplars
// (DB.SetMaxExemplars: the ring is resized, keeping the newest).
// (ErrExemplarsUnsupported, with which earlier versions rejected
// exemplars, is gone.)
//
// Metadata is stored: Appender.UpdateMetadata and AppenderV2's
// opts.Metadata set the series' metadata in the transaction
// (tsdb.Appender.UpdateMetadata; FromPromMetadata and ToPromMetadata
// convert), applied at Commit with its samples and read back through
// tsdb.Querier.SeriesMetadata and Metadata. As in Prometheus, UpdateMetadata
// needs the series to exist (an error wrapping tsdb.ErrUnknownSeries
// otherwise), and AppenderV2 drops metadata isotsdb rejects rather than
// the sample. (ErrMetadataUnsupported, with which earlier versions refused
// metadata, is no longer returned.)
//
// Appender.AppendSTZeroSample and AppendHistogramSTZeroSample append the
// zero sample at the start timestamp as Prometheus's head does
// (ErrStartTimestampsUnsupported, with which earlier versions refused
// them, is gone).
//
// # Late samples
//
// isotsdb's out-of-order window (tsdb.Options.OutOfOrderTimeWindow when the
// DB is opened, DB.SetOutOfOrderTimeWindow later) is Prometheus's
// storage.tsdb.out_of_order_time_window: Storage.ApplyConfig passes the
// window of a Prometheus configuration to the DB, as Prometheus's TSDB
// applies it on a reload. With the window off (the default) a late sample
// gets tsdb.ErrOutOfOrderSample; with it on, a sample older than the window
// gets tsdb.ErrTooOldSample (matching storage.ErrTooOldSample).
// Appender.SetOptions' DiscardOutOfOrder and AppenderV2's RejectOutOfOrder
// reject late samples at append as with the window off
// (tsdb.AppendOptions.RejectLate). Not honoured: the zero samples of
// AppendSTZeroSample, which Prometheus refuses when they would be out of
// order and isotsdb stores as late samples if the window admits them.
//
// Append errors that have a Prometheus counterpart match both:
// errors.Is(err, tsdb.ErrOutOfOrderSample) and errors.Is(err,
// storage.ErrOutOfOrderSample) both hold, likewise for too-old,
// duplicate and out-of-bounds samples. An invalid histogram is rejected with an error
// matching tsdb.ErrInvalidSample, isotsdb's histogram.ErrInvalid and precise
// reason (histogram.ErrCountMismatch, ...) and the error Prometheus's
// histogram Validate returns for that reason
// (histogram.ErrHistogramCountMismatch, ...).
//
// # Iterators and chunks
//
// Series iterators report every value type, as Prometheus's do: floats,
// integer histograms and float histograms, converted with ToPromHistogram
// and ToPromFloatHistogram. AtST is always 0 (unknown). The ChunkQuerier
// re-encodes those samples into Prometheus chunks: XOR chunks for floats,
// histogram and float-histogram chunks for histograms.
package promstorage
