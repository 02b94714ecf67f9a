package scrape_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
)

// commitHookAppender calls before just before Commit.
type commitHookAppender struct {
	tsdb.Appender
	before func()
}

func (a commitHookAppender) Commit() error {
	a.before()
	return a.Appender.Commit()
}

// TestIsolationDuringScrape: a Querier created while a scrape's
// transaction is complete but not committed sees none of it; one created
// after sees all of it.
func TestIsolationDuringScrape(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	var during map[string][]point
	scrape.WrapAppender(s, func(a tsdb.Appender) tsdb.Appender {
		return commitHookAppender{a, func() { during = readAll(t, db) }}
	})
	_, err := s.ScrapeGatherer(context.Background(), newRegistry(t), time.Now())
	require.NoError(t, err)
	require.Empty(t, during)
	require.Len(t, readAll(t, db), 12+5)
}

// TestIsolationConcurrent: scrapes of a registry whose gauges all hold the
// scrape's number run while readers query; every reader sees, for every
// gauge and for up, the same number of samples and the same newest value:
// whole scrapes only.
func TestIsolationConcurrent(t *testing.T) {
	const series, scrapes, readers = 200, 40, 2
	db := openDB(t, t.TempDir())
	reg := prometheus.NewRegistry()
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "iso", Help: "Iso."}, []string{"i"})
	reg.MustRegister(g)
	s := scrape.New(db, scrape.Options{Labels: labels.FromStrings("job", "iso")})

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, readers)
	for range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for reads := 0; ctx.Err() == nil; reads++ {
				if err := checkWhole(db); err != nil {
					errs <- fmt.Errorf("read %d: %w", reads, err)
					return
				}
			}
		}()
	}
	t0 := time.Now()
	for n := 1; n <= scrapes; n++ {
		for i := range series {
			g.WithLabelValues(fmt.Sprint(i)).Set(float64(n))
		}
		_, err := s.ScrapeGatherer(context.Background(), reg, t0.Add(time.Duration(n)*time.Second))
		require.NoError(t, err)
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	require.NoError(t, checkWhole(db))
}

// checkWhole reads the job "iso" through one Querier and checks that every
// series has the same number of samples and every iso gauge the same
// newest value, equal to that number.
func checkWhole(db *tsdb.DB) error {
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return err
	}
	defer q.Close()
	ss := q.Select(context.Background(), labels.MustNewMatcher(labels.MatchEqual, "job", "iso"))
	counts := map[int]int{}
	for ss.Next() {
		it := ss.At().Iterator(nil)
		n, last := 0, 0.0
		for it.Next() != chunks.ValNone {
			_, last = it.At()
			n++
		}
		if ss.At().Labels().Get("__name__") == "iso" && last != float64(n) {
			return fmt.Errorf("%s: newest value %g after %d samples", ss.At().Labels(), last, n)
		}
		counts[n]++
	}
	if err := ss.Err(); err != nil {
		return err
	}
	if len(counts) > 1 {
		return fmt.Errorf("series with different sample counts: %v", counts)
	}
	return nil
}
