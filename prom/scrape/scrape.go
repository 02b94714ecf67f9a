package scrape

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/exemplar"
	phistogram "github.com/prometheus/prometheus/model/histogram"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// Options configure a Scraper. The zero value scrapes like a Prometheus
// scrape config with no target labels and the defaults below.
type Options struct {
	// Labels are the target labels, added to every series scraped (job,
	// instance, ...) and to the report series. Names must not be empty or
	// start with "__" (Prometheus strips such labels from a target), values
	// must not be empty, and both must be valid UTF-8; otherwise every
	// scrape fails with ErrTargetLabels. They also tell a new Scraper which
	// series of the database are its target's (see Scraper): leave them
	// empty only for a database that holds nothing else.
	Labels labels.Labels
	// HonorLabels is Prometheus's honor_labels: a scraped label wins over
	// the target label of the same name. Without it the target label wins
	// and the scraped one is kept as exported_<name>.
	HonorLabels bool
	// IgnoreTimestamps is honor_timestamps: false: samples are stored at
	// the scrape's time even if the exposition gives them one.
	IgnoreTimestamps bool
	// TrackTimestampsStaleness is track_timestamps_staleness: series whose
	// samples carry their own timestamp get stale markers too when they
	// vanish (without it, as in Prometheus, they never do).
	TrackTimestampsStaleness bool
	// IgnoreNativeHistograms turns native histogram ingestion off (Prometheus's
	// scrape_native_histograms: false): a histogram is then stored as its
	// classic series only. By default native histograms are stored, and a
	// histogram that has both representations only as a native one.
	IgnoreNativeHistograms bool
	// AlwaysScrapeClassicHistograms is always_scrape_classic_histograms:
	// the classic series of a histogram are stored even when it is stored
	// as a native one too.
	AlwaysScrapeClassicHistograms bool
	// FallbackContentType is fallback_scrape_protocol's media type
	// ("text/plain", "application/openmetrics-text" or
	// "application/vnd.google.protobuf"): used when an exposition's content
	// type is missing, unparsable or unknown. Without it such a scrape fails
	// with ErrContentType.
	FallbackContentType string
}

// Result is what one call wrote.
type Result struct {
	// Scraped is the number of samples in the exposition (the value of
	// scrape_samples_scraped), PostRelabel those that got a label set
	// (scrape_samples_post_metric_relabeling: there is no relabeling, so
	// every sample; rejected and duplicate samples count), SeriesAdded the
	// series this Scraper had not seen in its last successful scrape and
	// whose sample was stored (scrape_series_added). For a failed scrape
	// they are the counts up to the failure, as Prometheus reports them.
	Scraped, PostRelabel, SeriesAdded int
	// Samples and Histograms are the float and native histogram samples of
	// the exposition stored (report series and stale markers excluded).
	Samples, Histograms int
	// Exemplars is the number of exemplars stored; the database may still
	// drop one that repeats a stored exemplar at Commit. The database keeps
	// exemplars only if tsdb.Options.MaxExemplars is set (it is 0 by
	// default): otherwise every exemplar counts in ExemplarsRejected.
	Exemplars int
	// Metadata is the number of metadata updates given to the database:
	// one per series of a family new to this Scraper or whose metadata
	// changed, and one per report series the first time. Unchanged ones
	// are not written again.
	Metadata int
	// Stale is the number of stale markers written.
	Stale int
	// Samples the database rejected, which are counted and skipped as
	// Prometheus does: out of order, a second value at a time (including
	// a series twice in one exposition), outside the head's time range.
	OutOfOrder, Duplicates, OutOfBounds int
	// Exemplars rejected: ExemplarsOutOfOrder counts those of samples all
	// of whose exemplars were out of order (Prometheus's count),
	// ExemplarsRejected every other rejection (duplicates, exemplars off,
	// out of order among accepted ones, invalid ones). Neither fails the
	// scrape.
	ExemplarsOutOfOrder, ExemplarsRejected int
	// Duration is the value of scrape_duration_seconds: from the start of
	// the call to the report, gathering and parsing included, the commit
	// not.
	Duration time.Duration
}

// Scraper ingests the scrapes of one target into a database, one
// transaction per scrape. Make one per target with New and keep it for
// the target's life: it caches the refs of the target's series and
// remembers which series the last scrape had, for stale markers. Its
// methods serialize on a mutex; scraping one target concurrently makes no
// sense (samples would arrive out of order) and is not faster.
//
// # Transactions
//
// Each call is one database transaction: a Querier sees all of a scrape
// (its samples, histograms, exemplars, metadata, stale markers and report
// series) or none of it. A call whose context is done before Commit writes
// nothing, and leaves the Scraper as it was.
//
// # Staleness
//
// A series of the previous successful scrape that is missing from this one
// gets a stale marker (value.StaleNaN) at the scrape's time, in the same
// transaction. Series whose samples carry their own timestamp are left
// alone unless Options.TrackTimestampsStaleness is set. MarkStale ends
// every series of the target (call it when the target is gone).
//
// After a restart the Scraper knows nothing of the previous process'
// scrapes: its first call (with Options.Labels not empty) lists the head's
// series (tsdb.DB.HeadSeries) and takes those that carry every target
// label, whose newest sample is before the scrape's time and is not a
// stale marker, as the previous scrape's, so that those no longer exposed
// get their stale marker as they would have without the restart. The
// target labels are all it goes by: a series whose exposed labels replaced
// a target label (HonorLabels) is not found, and two Scrapers given the
// same target labels would take each other's series. Without target
// labels it does not look.
//
// # Failed scrapes
//
// When gathering or parsing fails, or the database rejects a sample in a
// way that is not one of the counted rejections (see Result), nothing of
// the scrape is written: its transaction is rolled back. A second
// transaction then writes stale markers for every series of the previous
// scrape and the report series with up=0, as Prometheus does for a failed
// scrape; the error is a *ScrapeError with Committed set. (Prometheus
// itself skips the stale markers of the series the failed exposition had
// before the error; here they all end, since none of their samples of
// this scrape were stored.)
//
// # What matches Prometheus
//
// Per sample, the scrape loop's rules: target labels and honor_labels,
// honor_timestamps and track_timestamps_staleness, a second sample of a
// series in one exposition counted as a duplicate, out-of-order,
// duplicate and out-of-bounds samples counted and skipped, exemplars
// (those without timestamp take the sample's, except on native
// histograms, where they are dropped) sorted and appended with errors
// counted, metadata written for new series and on change, and the report
// series up, scrape_duration_seconds, scrape_samples_scraped,
// scrape_samples_post_metric_relabeling and scrape_series_added with
// Prometheus's metadata. Content types are those of Prometheus's textparse
// (text 0.0.4, OpenMetrics 1.0, delimited protobuf); OpenMetrics 2.0 is
// not enabled.
//
// # Not implemented
//
// Relabeling (relabel_configs and metric_relabel_configs), sample, label
// and bucket limits, created (start) timestamps and their zero samples,
// the conversion of classic histograms to native ones with custom buckets,
// type and unit labels, the extra report series of
// extra-scrape-metrics, and HTTP: the caller fetches the exposition (and
// its Content-Type) itself, or passes a prometheus.Gatherer. Too-old and
// too-far-in-the-future samples are counted as out of bounds (Prometheus
// fails a scrape on the former).
type Scraper struct {
	db        *tsdb.DB
	opts      Options
	targetErr error // checkTargetLabels(opts.Labels)
	// newAppender returns a transaction: db.Appender; tests wrap it.
	newAppender func(context.Context) tsdb.Appender

	mu sync.Mutex // serializes the calls; protects the fields below

	iter uint64 // the scrape being made (or last made); starts at 1

	// restored is set once the head's series of the target were looked up
	// (restore); pending holds those not yet ended or seen again, and
	// pendingSeen those of them the scrape being made appended.
	restored    bool
	pending     map[tsdb.SeriesRef]labels.Labels
	pendingSeen map[tsdb.SeriesRef]struct{}

	series  map[string]*cacheEntry         // by the parser's series bytes
	tracked map[tsdb.SeriesRef]*cacheEntry // series of the last successful scrape
	attempt map[tsdb.SeriesRef]*cacheEntry // series of the scrape being made
	meta    metaCache
	reports [len(reportSeries)]reportEntry
	merger  *labelMerger
	sb      labels.ScratchBuilder // converts exemplar labels
	pl      plabels.Labels        // the parser's labels of the current series
	ex      exemplar.Exemplar
	exs     []exemplar.Exemplar
	buf     bytes.Buffer // the encoded gathering
}

// protoDelimited is the content type of a delimited protobuf exposition:
// what ScrapeGatherer encodes a gathering as, since it is the format that
// carries native histograms and exemplars of every metric type.
var protoDelimited = expfmt.NewFormat(expfmt.TypeProtoDelim)

// New returns a Scraper of one target that writes to db. It does not use
// the database until the first scrape.
func New(db *tsdb.DB, opts Options) *Scraper {
	s := &Scraper{
		db:          db,
		opts:        opts,
		targetErr:   checkTargetLabels(opts.Labels),
		newAppender: db.Appender,
		series:      map[string]*cacheEntry{},
		tracked:     map[tsdb.SeriesRef]*cacheEntry{},
		attempt:     map[tsdb.SeriesRef]*cacheEntry{},
		pendingSeen: map[tsdb.SeriesRef]struct{}{},
		meta:        metaCache{},
		merger:      newLabelMerger(opts.Labels, opts.HonorLabels),
	}
	for i, r := range reportSeries {
		s.reports[i].lset = reportLabels(r.name, opts.Labels)
	}
	return s
}

// ScrapeGatherer scrapes g at time t: it gathers, encodes the gathering as
// delimited protobuf (so that native histograms and exemplars come
// through, as when Prometheus scrapes a client_golang handler) and
// ingests it as ScrapeExposition does. A gathering error fails the scrape
// even if g returned metric families with it (promhttp answers such a
// gathering with an HTTP error by default).
func (s *Scraper) ScrapeGatherer(ctx context.Context, g prometheus.Gatherer, t time.Time) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := time.Now()
	s.buf.Reset()
	mfs, err := g.Gather()
	if err != nil {
		err = fmt.Errorf("gather: %w", err)
	} else {
		enc := expfmt.NewEncoder(&s.buf, protoDelimited)
		for _, mf := range mfs {
			if err = enc.Encode(mf); err != nil {
				err = fmt.Errorf("encode %s: %w", mf.GetName(), err)
				break
			}
		}
	}
	return s.scrapeLocked(ctx, start, t, s.buf.Bytes(), string(protoDelimited), err)
}

// ScrapeExposition ingests body, an exposition of the target fetched at
// time t, of the content type contentType (the HTTP Content-Type: text
// 0.0.4, OpenMetrics 1.0 or delimited protobuf; see
// Options.FallbackContentType). Samples without a timestamp of their own
// are stored at t, and so are the report series. An empty body is a
// successful scrape of nothing (every series of the previous scrape gets
// its stale marker), as in Prometheus.
func (s *Scraper) ScrapeExposition(ctx context.Context, body []byte, contentType string, t time.Time) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scrapeLocked(ctx, time.Now(), t, body, contentType, nil)
}

// MarkStale writes, in one transaction, stale markers at t for every
// series of the target's last successful scrape (after a restart: those
// the head has, see Scraper) and for its report series, as Prometheus does
// when a target disappears. The next scrape, if any, starts afresh.
// Markers that would be out of order are skipped.
func (s *Scraper) MarkStale(ctx context.Context, t time.Time) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var res Result
	ts := t.UnixMilli()
	if err := s.begin(ctx, ts); err != nil {
		return res, err
	}
	app := s.newAppender(ctx)
	err := s.writeStale(app, ts, &res)
	if err == nil {
		err = s.writeReportStale(app, ts, &res)
	}
	if err != nil {
		_ = app.Rollback()
		return Result{}, &ScrapeError{Err: err}
	}
	if err := app.Commit(); err != nil {
		return Result{}, &ScrapeError{Err: err}
	}
	s.endedAll()
	// A target that comes back is a new one, as for Prometheus's new
	// scrape loop: its series count as added and get their metadata.
	clear(s.series)
	clear(s.meta)
	for i := range s.reports {
		s.reports[i].metaIter = 0
	}
	return res, nil
}

// scrapeLocked is a scrape of body (fetchErr: the exposition could not be
// had) at t; start is when the call started.
func (s *Scraper) scrapeLocked(ctx context.Context, start, t time.Time, body []byte, contentType string, fetchErr error) (Result, error) {
	var res Result
	ts := t.UnixMilli()
	if err := s.begin(ctx, ts); err != nil {
		return res, err
	}
	app := s.newAppender(ctx)
	err := fetchErr
	if err == nil && len(body) > 0 {
		err = s.appendExposition(app, body, contentType, ts, &res)
	}
	if err == nil {
		err = s.writeStale(app, ts, &res)
	}
	if err == nil {
		res.Duration = time.Since(start)
		err = s.writeReport(app, ts, 1, &res)
	}
	if err != nil {
		_ = app.Rollback()
		return s.failLocked(ctx, start, ts, res, err)
	}
	if err := app.Commit(); err != nil {
		s.forget()
		return Result{}, &ScrapeError{Err: err}
	}

	// The scrape is in: its series are now the ones to end next time.
	s.tracked, s.attempt = s.attempt, s.tracked
	clear(s.attempt)
	s.pending = nil
	if len(body) > 0 {
		s.flush()
	}
	return res, nil
}

// failLocked handles a scrape that failed with cause after its transaction
// was rolled back: unless ctx is done, it ends the previous scrape's series
// and reports up=0 in a new transaction. res holds the failed scrape's
// counts.
func (s *Scraper) failLocked(ctx context.Context, start time.Time, ts int64, res Result, cause error) (Result, error) {
	s.forget()
	if ctx.Err() != nil {
		return Result{}, &ScrapeError{Err: cause}
	}
	res = Result{Scraped: res.Scraped, PostRelabel: res.PostRelabel, SeriesAdded: res.SeriesAdded}
	s.resetAttempt()
	app := s.newAppender(ctx)
	err := s.writeStale(app, ts, &res)
	if err == nil {
		res.Duration = time.Since(start)
		err = s.writeReport(app, ts, 0, &res)
	}
	if err != nil {
		_ = app.Rollback()
	} else {
		err = app.Commit()
	}
	if err != nil {
		s.forget()
		return Result{}, &ScrapeError{Err: errors.Join(cause, err)}
	}
	s.endedAll()
	return res, &ScrapeError{Err: cause, Committed: true}
}

// begin starts a call that writes at ts: the target labels must be valid,
// the head's series of the target looked up on the first call (restore).
// A *ScrapeError says the call cannot go on; nothing was written.
func (s *Scraper) begin(ctx context.Context, ts int64) error {
	if s.targetErr != nil {
		return &ScrapeError{Err: s.targetErr}
	}
	if err := s.restore(ctx, ts); err != nil {
		return &ScrapeError{Err: err}
	}
	s.iter++
	s.resetAttempt()
	return nil
}

// endedAll records that a commit ended every series of the target: the
// next scrape has none to end.
func (s *Scraper) endedAll() {
	clear(s.tracked)
	s.pending = nil
}

// resetAttempt starts a scrape's staleness tracking afresh.
func (s *Scraper) resetAttempt() {
	clear(s.attempt)
	clear(s.pendingSeen)
}

// forget undoes what the scrape being made taught the cache, after it
// committed nothing: the series it added (so that they count as added,
// and get their metadata, when they come again), the families whose
// metadata it changed and the report series' metadata it wrote.
func (s *Scraper) forget() {
	for k, ce := range s.series {
		if ce.addedIter == s.iter {
			delete(s.series, k)
		}
	}
	for k, m := range s.meta {
		if m.changeIter == s.iter {
			delete(s.meta, k)
		}
	}
	for i := range s.reports {
		if s.reports[i].metaIter == s.iter {
			s.reports[i].metaIter = 0
		}
	}
}

// flush drops from the cache the series the committed scrape did not have,
// and the metadata of families it has not seen for metaKeepScrapes
// scrapes, so that series churn does not grow the cache forever.
func (s *Scraper) flush() {
	for k, ce := range s.series {
		if ce.lastIter != s.iter {
			delete(s.series, k)
		}
	}
	for k, m := range s.meta {
		if s.iter-m.lastIter > metaKeepScrapes {
			delete(s.meta, k)
		}
	}
}

// metaKeepScrapes is how many scrapes a family's metadata is kept after
// its last appearance (Prometheus keeps it as long, for its metadata API).
const metaKeepScrapes = 10

// restore looks up, on the first call, the head's series of the target
// that a previous process may have left without stale marker (see
// Scraper). It does nothing without target labels.
func (s *Scraper) restore(ctx context.Context, ts int64) error {
	if s.restored {
		return nil
	}
	if s.opts.Labels.IsEmpty() {
		s.restored = true
		return nil
	}
	pending := map[tsdb.SeriesRef]labels.Labels{}
	err := s.db.HeadSeries(ctx, func(info tsdb.HeadSeriesInfo) bool {
		if !info.Stale && info.T < ts && hasTargetLabels(info.Labels, s.opts.Labels) && !s.isReport(info.Labels) {
			pending[info.Ref] = info.Labels
		}
		return true
	})
	if err != nil {
		return err
	}
	s.restored = true
	if len(pending) > 0 {
		s.pending = pending
	}
	return nil
}

// appendExposition parses body and appends its samples, exemplars and
// metadata to app.
func (s *Scraper) appendExposition(app tsdb.Appender, body []byte, contentType string, ts int64, res *Result) error {
	p, err := textparse.New(body, contentType, nil, textparse.ParserOptions{
		IgnoreNativeHistograms:                  s.opts.IgnoreNativeHistograms,
		KeepClassicOnClassicAndNativeHistograms: s.opts.AlwaysScrapeClassicHistograms,
		FallbackContentType:                     s.opts.FallbackContentType,
	})
	if p == nil {
		if err == nil {
			err = fmt.Errorf("content type %q", contentType)
		}
		return fmt.Errorf("%w: %w", ErrContentType, err)
	}
	// A non-nil err with a parser says that the fallback is used: not an
	// error of the scrape.
	var lastMeta *metaEntry // of the family whose TYPE, HELP or UNIT came last
	for {
		et, err := p.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("parse: %w", err)
		}
		switch et {
		case textparse.EntryType:
			name, typ := p.Type()
			lastMeta = s.meta.setType(name, typ, s.iter)
			continue
		case textparse.EntryHelp:
			name, help := p.Help()
			lastMeta = s.meta.setHelp(name, help, s.iter)
			continue
		case textparse.EntryUnit:
			name, unit := p.Unit()
			lastMeta = s.meta.setUnit(name, unit, s.iter)
			continue
		case textparse.EntryComment:
			continue
		}
		ce, isNew, err := s.appendSample(app, p, et == textparse.EntryHistogram, ts, res)
		if err != nil {
			return err
		}
		if lastMeta != nil && (isNew || lastMeta.changeIter == s.iter) &&
			inFamily(ce.lset.Get(model.MetricNameLabel), lastMeta.family, lastMeta.Type) {
			// Metadata is not worth failing a scrape for (the database
			// rejects only text that is not UTF-8).
			if _, err := app.UpdateMetadata(ce.ref, ce.lset, promstorage.FromPromMetadata(lastMeta.Metadata)); err == nil {
				res.Metadata++
			}
		}
	}
}

// appendSample appends the sample p is at (a native histogram if hist),
// and its exemplars. It returns the series' cache entry and whether the
// series is new to the cache; an error fails the scrape.
func (s *Scraper) appendSample(app tsdb.Appender, p textparse.Parser, hist bool, ts int64, res *Result) (*cacheEntry, bool, error) {
	res.Scraped++
	var (
		met    []byte
		tp     *int64
		v      float64
		h      *phistogram.Histogram
		fh     *phistogram.FloatHistogram
		ref    tsdb.SeriesRef
		err    error
		cached bool
		ce     *cacheEntry
	)
	if hist {
		met, tp, h, fh = p.Histogram()
	} else {
		met, tp, v = p.Series()
	}
	if s.opts.IgnoreTimestamps {
		tp = nil
	}
	t := ts
	if tp != nil {
		t = *tp
	}
	ce, cached = s.series[string(met)]
	if !cached {
		p.Labels(&s.pl)
		lset := s.merger.merge(s.pl)
		if !lset.Has(model.MetricNameLabel) {
			return nil, false, fmt.Errorf("%w: %s", ErrNoMetricName, met)
		}
		ce = &cacheEntry{lset: lset, addedIter: s.iter}
	}
	res.PostRelabel++
	switch {
	case cached && ce.lastIter == s.iter && tp == nil:
		err = tsdb.ErrDuplicateSampleForTimestamp
	case hist:
		ref, err = app.AppendHistogram(ce.ref, ce.lset, t, promstorage.FromPromHistogram(h), promstorage.FromPromFloatHistogram(fh))
	default:
		ref, err = app.Append(ce.ref, ce.lset, t, v)
	}
	ce.lastIter = s.iter
	switch {
	case err == nil:
		if hist {
			res.Histograms++
		} else {
			res.Samples++
		}
		if !cached {
			ce.ref = ref
			s.series[string(met)] = ce
			res.SeriesAdded++
		} else if ref != ce.ref {
			s.moveRef(ce, ref)
		}
		if tp == nil || s.opts.TrackTimestampsStaleness {
			s.attempt[ce.ref] = ce
		}
		if s.pending != nil {
			s.pendingSeen[ce.ref] = struct{}{}
		}
	case errors.Is(err, tsdb.ErrOutOfOrderSample):
		res.OutOfOrder++
	case errors.Is(err, tsdb.ErrDuplicateSampleForTimestamp):
		res.Duplicates++
	case isOutOfBounds(err):
		res.OutOfBounds++
	default:
		return nil, false, fmt.Errorf("series %s: %w", met, err)
	}
	s.appendExemplars(app, p, ce, t, hist, res)
	return ce, !cached, nil
}
