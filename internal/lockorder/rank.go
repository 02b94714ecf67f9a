package lockorder

import "fmt"

// Rank is the position of a lock class in the order: a goroutine holding
// a lock of rank r takes only locks of rank greater than r. The zero Rank
// is no class.
type Rank uint8

// The lock classes, in the order they are taken. Each line says what the
// lock guards; the edges that make the order (lock A held while lock B is
// taken) are listed in the root package's doc.go.
const (
	_ Rank = iota
	// RankCompaction is DB.cmtx: serializes compaction, retention,
	// Delete, CleanTombstones, Snapshot and Close.
	RankCompaction
	// RankDB is DB.mu: the DB's block list, headMint and closed flag.
	RankDB
	// RankQuerier is querier.mu: a Querier's closed flag; held for
	// reading by its queries, for writing by Close.
	RankQuerier
	// RankQuerierSets is querier.setsMu: the head series sets a Querier
	// handed out, which its Close freezes.
	RankQuerierSets
	// RankHeadSeriesSet is headSeriesSet.mu: a head series set's cursor
	// and captured series.
	RankHeadSeriesSet
	// RankHeadClose is head.closeMu: orders commits (read side) against
	// the head's close (write side).
	RankHeadClose
	// RankWBL is wblLog.mu: serializes writing, cutting and truncating
	// the DB's WBL (the log of late samples), and its segments' times.
	// A Commit takes it holding head.closeMu (read side) and no other
	// head lock.
	RankWBL
	// RankHeadTombstones is head.tombsMu: serializes replacing the head's
	// deletion intervals.
	RankHeadTombstones
	// RankStripe is seriesStripe.mu: one stripe of the head's
	// series-by-labels map.
	RankStripe
	// RankPostings is index.MemPostings.mu: the head's postings lists.
	RankPostings
	// RankSeries is memSeries.mu: one head series' chunks, write-ID ring,
	// pending-sample marks and metadata.
	RankSeries
	// RankHeadRange is head.rangeMu: the range commits record while a
	// truncation recomputes the head's time range.
	RankHeadRange
	// RankExemplars is exemplarStorage.mu: the head's exemplar ring and
	// its index by series. A Commit takes it holding head.closeMu (read
	// side) and no other head lock; DB.SetMaxExemplars holding DB.mu.
	RankExemplars
	// RankIsolation is isolation.mu: write IDs in flight and open read
	// snapshots.
	RankIsolation
	// RankBlock is Block.mu: a block's reader count, closing state and
	// tombstones.
	RankBlock
	// RankRefTable is refTable.mu: page allocation of the head's
	// series-by-ref table and its map of large refs.
	RankRefTable

	numRanks
)

var rankNames = [numRanks]string{
	RankCompaction:     "DB.cmtx",
	RankDB:             "DB.mu",
	RankQuerier:        "querier.mu",
	RankQuerierSets:    "querier.setsMu",
	RankHeadSeriesSet:  "headSeriesSet.mu",
	RankHeadClose:      "head.closeMu",
	RankWBL:            "wblLog.mu",
	RankHeadTombstones: "head.tombsMu",
	RankStripe:         "seriesStripe.mu",
	RankPostings:       "MemPostings.mu",
	RankSeries:         "memSeries.mu",
	RankHeadRange:      "head.rangeMu",
	RankExemplars:      "exemplarStorage.mu",
	RankIsolation:      "isolation.mu",
	RankBlock:          "Block.mu",
	RankRefTable:       "refTable.mu",
}

// String returns the name of the lock the rank belongs to, as
// "memSeries.mu".
func (r Rank) String() string {
	if r > 0 && r < numRanks {
		return rankNames[r]
	}
	return fmt.Sprintf("lockorder.Rank(%d)", uint8(r))
}

// Ranks returns every rank, in order.
func Ranks() []Rank {
	rs := make([]Rank, 0, numRanks-1)
	for r := Rank(1); r < numRanks; r++ {
		rs = append(rs, r)
	}
	return rs
}

// Class is a lock class: the type argument of Mutex and RWMutex that gives
// the lock its rank. The classes are the zero-size types below.
type Class interface {
	Rank() Rank
}

// The classes, one per rank (see the Rank constants for what each lock
// guards).
type (
	Compaction     struct{}
	DB             struct{}
	Querier        struct{}
	QuerierSets    struct{}
	HeadSeriesSet  struct{}
	HeadClose      struct{}
	WBL            struct{}
	HeadTombstones struct{}
	Stripe         struct{}
	Postings       struct{}
	Series         struct{}
	HeadRange      struct{}
	Exemplars      struct{}
	Isolation      struct{}
	Block          struct{}
	RefTable       struct{}
)

func (Compaction) Rank() Rank     { return RankCompaction }
func (DB) Rank() Rank             { return RankDB }
func (Querier) Rank() Rank        { return RankQuerier }
func (QuerierSets) Rank() Rank    { return RankQuerierSets }
func (HeadSeriesSet) Rank() Rank  { return RankHeadSeriesSet }
func (HeadClose) Rank() Rank      { return RankHeadClose }
func (WBL) Rank() Rank            { return RankWBL }
func (HeadTombstones) Rank() Rank { return RankHeadTombstones }
func (Stripe) Rank() Rank         { return RankStripe }
func (Postings) Rank() Rank       { return RankPostings }
func (Series) Rank() Rank         { return RankSeries }
func (HeadRange) Rank() Rank      { return RankHeadRange }
func (Exemplars) Rank() Rank      { return RankExemplars }
func (Isolation) Rank() Rank      { return RankIsolation }
func (Block) Rank() Rank          { return RankBlock }
func (RefTable) Rank() Rank       { return RankRefTable }
