package main

import (
	"time"

	"github.com/prometheus/prometheus/storage"
)

// store is one TSDB under test, behind the operations the workload needs.
// Each implementation converts the corpus into its own label type once, at
// open, so that label building is outside every measurement; both keep
// those label sets alive (a scrape loop's series cache does the same).
type store interface {
	// appender starts a transaction.
	appender() appender
	// query runs q over [mint, maxt], reads every sample and returns the
	// number of series and samples read.
	query(q *query, mint, maxt int64) (series, samples int, err error)
	// queryHistograms runs q over [mint, maxt], reads every sample, all of
	// which must be integer histograms, into one reused histogram and
	// returns the number of series and samples read.
	queryHistograms(q *query, mint, maxt int64) (series, samples int, err error)
	// scan runs q over [mint, maxt] and calls fn with every float sample
	// and the index of its series among storeConfig.series; a series
	// that is not among them, or a sample of another type, is an error.
	// It is for checks, outside every measurement.
	scan(q *query, mint, maxt int64, fn func(i int, t int64, v float64)) error
	// startQuery opens a querier over [mint, maxt] and closes it.
	startQuery(mint, maxt int64) error
	// labelValues returns the values of the label name over [mint, maxt],
	// without matchers.
	labelValues(name string, mint, maxt int64) ([]string, error)
	// labelNames returns the label names over [mint, maxt], without
	// matchers.
	labelNames(mint, maxt int64) ([]string, error)
	// compact writes every head range that is due into a block and
	// truncates the head.
	compact() error
	// blocks returns the directories of the blocks and their sample counts.
	blocks() []blockInfo
	// opened returns what opening the DB cost (see storeConfig.measureOpen).
	opened() openStats
	// queryable returns the DB as a Prometheus storage.Queryable, for the
	// PromQL engine; it stays valid until close.
	queryable() storage.Queryable
	// close closes the DB.
	close() error
}

// openStats is what opening a DB cost: the wall and process CPU time of
// the open call alone (the label sets the store builds are made before
// it) and, if storeConfig.measureOpen was set, the growth of the live heap
// over it (after GC on both sides; the GCs are outside the times).
type openStats struct {
	wall, cpu time.Duration
	heap      int64
}

// appender is one transaction; refs are the store's series references.
type appender interface {
	// append adds series i's sample (i indexes the corpus or, for the
	// stress workload, the store's stress series).
	append(ref uint64, i int, t int64, v float64) (uint64, error)
	// appendHistogram adds histogram series j's sample: the store's own
	// form of h, which it keeps.
	appendHistogram(ref uint64, j int, t int64, h *histSample) (uint64, error)
	commit() error
	rollback() error
}

// blockInfo is one block on disk.
type blockInfo struct {
	dir     string
	samples uint64
}

// storeKind names a store implementation.
type storeKind int

const (
	isotsdbStore storeKind = iota
	prometheusStore
)

func (k storeKind) String() string {
	if k == isotsdbStore {
		return "isotsdb"
	}
	return "prometheus"
}

// storeConfig is what a store is opened with.
type storeConfig struct {
	dir       string
	isolation bool
	series    [][]string // label name/value pairs of the series to write
	hseries   [][]string // the same of the histogram series
	// lateWindow is the out-of-order window (0: off, late samples are
	// rejected).
	lateWindow time.Duration
	// blockRange is the range of the blocks the head cuts, ms (0: the
	// package's blockRange, 1h).
	blockRange int64
	// measureOpen makes open measure the live heap before and after the
	// DB's open call (two GCs each side); see openStats.
	measureOpen bool
	// snapshotOnShutdown turns isotsdb's Options.SnapshotOnShutdown on.
	snapshotOnShutdown bool
}

// blockRangeMs returns cfg's block range in ms.
func (cfg storeConfig) blockRangeMs() int64 {
	if cfg.blockRange > 0 {
		return cfg.blockRange
	}
	return blockRange
}

// measureOpen runs open, the DB's open call, and returns what it cost
// (the heap only if heap is set).
func measureOpen(heap bool, open func() error) (openStats, error) {
	var base uint64
	if heap {
		base = liveHeap()
	}
	m := startMeter()
	err := open()
	u := m.stop()
	st := openStats{wall: u.wall, cpu: u.cpu}
	if heap && err == nil {
		st.heap = int64(liveHeap()) - int64(base)
	}
	return st, err
}

// openStore opens a store of kind k on cfg.dir: a fresh one if the
// directory is empty, else the data already there (a restart).
func openStore(k storeKind, cfg storeConfig) (store, error) {
	if k == isotsdbStore {
		return openIsotsdb(cfg)
	}
	return openPrometheus(cfg)
}

// query is a label selector in a store-neutral form.
type query struct {
	name     string    // what the table calls it
	matchers []matcher // all must match
	weight   int       // executions per round of the read phase
	prepared [2]any    // per store kind: its own matcher values
}

// matcher is one label matcher: equality or regex.
type matcher struct {
	name, value string
	regex       bool
}

// freshLabels returns a copy of lset, made with clone, when ref is 0 (the
// series is new to the appender), else lset itself. A scrape builds the
// labels of a series afresh each time; a store keeps those of a series it
// creates, Prometheus's head as given, isotsdb's as a copy. Appending the
// stores' shared label sets would let Prometheus's head keep memory the
// benchmark allocated, which its heap figures then count once for both the
// benchmark and the store, and isotsdb's twice.
func freshLabels[L any](ref uint64, lset L, clone func(L) L) L {
	if ref == 0 {
		return clone(lset)
	}
	return lset
}
