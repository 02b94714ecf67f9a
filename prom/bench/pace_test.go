package main

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// laggingStore holds the first commit of target 0 until target 1 is done
// or waits for it, and records how far the writers drift apart.
type laggingStore struct {
	store
	rounds  int
	release chan struct{}
	once    sync.Once

	mu      sync.Mutex
	held    bool
	latest  [2]int // newest round committed per target
	maxLead int    // most rounds target 1 was ahead when target 0 committed
}

func (s *laggingStore) free() { s.once.Do(func() { close(s.release) }) }

func (s *laggingStore) appender() appender {
	return &laggingAppender{appender: s.store.appender(), s: s, target: -1}
}

type laggingAppender struct {
	appender
	s      *laggingStore
	target int
	round  int
}

func (a *laggingAppender) append(ref uint64, i int, t int64, v float64) (uint64, error) {
	a.target = i / targetSize
	a.round = int((t - baseTime) / scrapeEvery)
	return a.appender.append(ref, i, t, v)
}

func (a *laggingAppender) commit() error {
	s := a.s
	s.mu.Lock()
	hold := a.target == 0 && !s.held
	s.held = s.held || hold
	s.mu.Unlock()
	if hold {
		<-s.release
	}
	if err := a.appender.commit(); err != nil {
		return err
	}
	s.mu.Lock()
	s.latest[a.target] = max(s.latest[a.target], a.round)
	if a.target == 0 {
		s.maxLead = max(s.maxLead, s.latest[1]-a.round)
	}
	done := a.target == 1 && a.round == s.rounds-1
	s.mu.Unlock()
	if done {
		s.free()
	}
	return nil
}

// TestIngestWritersKeepPace: ingest's two writers (one per target) must
// not drift apart by half a block range, or the one behind gets
// ErrOutOfBounds, as TestSmallRun did on a loaded machine when a writer
// was descheduled. Here the first commit of target 0 is held until the
// other writer has finished (it never waits) or waits for it; then every
// append must succeed and the lead stay within maxLag rounds.
func TestIngestWritersKeepPace(t *testing.T) {
	c, err := loadCorpus("../../testdata/20kseries.json", 2*targetSize)
	require.NoError(t, err)
	require.Equal(t, 2, c.targets())
	const rounds = 240 // an hour: more than half a block range
	require.Greater(t, int64(rounds)*scrapeEvery, blockRange/2)
	s, err := openStore(isotsdbStore, storeConfig{dir: t.TempDir(), isolation: false, series: c.series})
	require.NoError(t, err)
	defer s.close()
	ls := &laggingStore{store: s, rounds: rounds, release: make(chan struct{})}
	pacerWaitHook = func(w, _ int) {
		if w == 1 {
			ls.free()
		}
	}
	defer func() { pacerWaitHook = nil }()

	n, err := ingest(ls, c, make([]uint64, len(c.series)), 0, rounds)
	require.NoError(t, err)
	require.Equal(t, rounds*len(c.series), n)
	require.LessOrEqual(t, ls.maxLead, maxLag)
	require.Positive(t, ls.maxLead, "target 1 ran ahead while target 0 was held")
}
