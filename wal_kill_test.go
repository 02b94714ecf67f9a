package tsdb

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

var killRounds = flag.Int("kill-rounds", 20, "how many times TestWALKill kills the writer process")

const (
	killChildEnv   = "ISOTSDB_KILL_CHILD_DIR"
	killVariantEnv = "ISOTSDB_KILL_VARIANT"
	killBatchWidth = 50 // series per batch
)

func killLabels(i int) labels.Labels {
	return labels.FromStrings(labels.MetricName, "kill", "s", strconv.Itoa(i))
}

// killVariant shapes the batches of a kill test. Batch k writes its
// in-order samples at k*step and, for k > lag, a late sample at
// (k-lag)*step+5 to every fifth series, behind the newer samples later
// batches wrote there: a batch is in-order and late samples in one
// commit.
type killVariant struct {
	name   string
	step   int64 // milliseconds between two batches
	lag    int   // batches a late sample is behind
	window time.Duration
	// snapshot turns Options.SnapshotOnShutdown on in the child and in
	// the parent's check, whose clean Close writes the snapshot the next
	// child restores from (and may be killed while loading or removing).
	snapshot bool
}

var (
	// killInRange: batches 10ms apart, late samples 30ms late; the head
	// never becomes compactable, so every late sample is in its range.
	killInRange = killVariant{name: "in-range", step: 10, lag: 3, window: time.Hour}
	// killBehind: batches a minute apart, late samples 150 minutes late
	// within a 3h window. The child's background compaction cuts blocks
	// while it commits (the head is compactable from batch 181 on), so
	// most late samples fall behind the head's range, and kills land
	// during compactions, head truncations and WAL checkpoints too.
	killBehind = killVariant{name: "behind", step: time.Minute.Milliseconds(), lag: 150, window: 3 * time.Hour}
	// killSnapshot: killInRange with chunk snapshots on.
	killSnapshot = killVariant{name: "snapshot", step: 10, lag: 3, window: time.Hour, snapshot: true}
)

// batch returns the batch that wrote a sample at t.
func (v killVariant) batch(t int64) int {
	if t%v.step == 0 {
		return int(t / v.step)
	}
	return int((t-5)/v.step) + v.lag
}

// lateTime returns the time of batch k's late samples (k > lag).
func (v killVariant) lateTime(k int) int64 { return int64(k-v.lag)*v.step + 5 }

// batchSize returns the number of samples of batch k.
func (v killVariant) batchSize(k int) int {
	if k > v.lag {
		return killBatchWidth + killBatchWidth/5
	}
	return killBatchWidth
}

func (v killVariant) options() *Options {
	o := DefaultOptions()
	o.OutOfOrderTimeWindow = v.window
	o.SnapshotOnShutdown = v.snapshot
	return o
}

// TestWALKill checks durability under SIGKILL: a child process commits batches
// of floats, histograms and late samples
// with fsync at every commit and reports each one on stdout once Commit has
// returned; the parent kills it with SIGKILL at a random moment, reopens the
// DB and checks that every reported batch is present and none is partial.
// Every 40 batches the child runs Compact, which writes the closed chunks
// to chunks_head/, so kills also tear those files and reopens read them.
// -kill-rounds sets how many times (default 20).
func TestWALKill(t *testing.T) { testWALKill(t, "^TestWALKill$", killInRange) }

// TestWALKillBehind is TestWALKill with late samples behind the head's
// range and the child's background compactions (killBehind).
func TestWALKillBehind(t *testing.T) { testWALKill(t, "^TestWALKillBehind$", killBehind) }

// TestWALKillSnapshot is TestWALKill with chunk snapshots: each check's
// Close writes one, and the next child restores from it.
func TestWALKillSnapshot(t *testing.T) { testWALKill(t, "^TestWALKillSnapshot$", killSnapshot) }

func testWALKill(t *testing.T, run string, v killVariant) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		require.Equal(t, v.name, os.Getenv(killVariantEnv), "child of another variant")
		killChild(t, dir, v)
		return
	}
	dir := t.TempDir()
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	acked, maxBlocks := 0, 0
	var restored atomic.Int64 // children that restored from a snapshot
	// The behind variant needs batches enough for compactions and late
	// samples behind the head's range: on a slow machine (the invariants
	// build checks the head after every commit) it runs more rounds, up to
	// 20 times the count asked for, until it has them.
	goal := 0
	if v.name == killBehind.name {
		goal = 3 * v.lag
	}
	for round := 0; round < *killRounds || acked <= goal && round < 20**killRounds; round++ {
		cmd := exec.Command(os.Args[0], "-test.run="+run, "-test.count=1")
		cmd.Env = append(os.Environ(), killChildEnv+"="+dir, killVariantEnv+"="+v.name)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())

		// Read acknowledgements until a random moment, then kill.
		lines := make(chan int)
		go func() {
			defer close(lines)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if sc.Text() == "restored from snapshot" {
					restored.Add(1)
				}
				if k, ok := strings.CutPrefix(sc.Text(), "committed "); ok {
					n, err := strconv.Atoi(k)
					if err == nil {
						lines <- n
					}
				}
			}
		}()
		// Even rounds kill at a random moment after the start, which may
		// fall inside Open's replay; odd rounds at a random moment after
		// the child's first acknowledgement, so that commits are killed
		// mid-way however slowly a loaded machine starts the child.
		delay := time.Duration(20+rng.IntN(150)) * time.Millisecond
		var killAfter <-chan time.Time
		if round%2 == 0 {
			killAfter = time.After(delay)
		}
		killed := false
		for !killed {
			select {
			case k, ok := <-lines:
				require.True(t, ok, "round %d: child exited before it was killed (seed %d)", round, seed)
				acked = max(acked, k)
				if killAfter == nil {
					killAfter = time.After(delay)
				}
			case <-killAfter:
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				killed = true
			}
		}
		for k := range lines { // acknowledgements already written count too
			acked = max(acked, k)
		}
		_ = cmd.Wait()

		present, last, minValid, blocks := killCheck(t, dir, v)
		for k := 1; k <= acked; k++ {
			require.True(t, present[k], "round %d: acknowledged batch %d lost (seed %d)", round, k, seed)
		}
		// The Open in killCheck repaired the WBL: it reads to its end, and
		// holds the late samples of every batch present that are in the
		// head's range, once: those of acknowledged batches were fsynced
		// before Commit returned, and Open copies from the WAL those of a
		// batch killed between its WAL and WBL writes. Before the head's
		// range (minValidTime) Open copies only those the blocks' WAL mark
		// tells no block holds (see wal.go): there the WBL holds a
		// batch's late samples once or, if a block holds them and
		// truncateWBL removed their segment or the batch was killed
		// between its two writes, not at all.
		late := map[int64]int{}
		samples, _ := readWBLDir(t, vfs.OS(), filepath.Join(dir, wblDirName))
		for _, s := range samples {
			require.True(t, s.isCopy, "round %d: only isotsdb's copies in the WBL", round)
			late[s.t]++
		}
		for k := range present {
			if k <= v.lag {
				continue
			}
			lt := v.lateTime(k)
			if lt < minValid && late[lt] == 0 {
				continue
			}
			require.Equal(t, (killBatchWidth+4)/5, late[lt],
				"round %d: late samples of batch %d in the WBL (seed %d)", round, k, seed)
		}
		t.Logf("round %d: %d batches acknowledged, %d present, %d blocks", round, acked, last, blocks)
		maxBlocks = max(maxBlocks, blocks)
	}
	require.Positive(t, acked)
	if v.snapshot {
		t.Logf("%d children restored from a snapshot", restored.Load())
		require.Positive(t, restored.Load(), "no child restored from a snapshot")
	}
	if v.name == killBehind.name {
		// The variant did what it is for: blocks were cut while batches
		// with late samples behind the head's range were committed.
		require.Greater(t, acked, 3*v.lag, "batches acknowledged")
		require.Positive(t, maxBlocks, "no block was written")
	}
}

// killCheck opens the DB in dir and returns which batches are present,
// the highest one, the head's minValidTime and the number of blocks; it
// fails on a partial batch.
func killCheck(t *testing.T, dir string, v killVariant) (present map[int]bool, last int, minValid int64, blocks int) {
	t.Helper()
	db, err := Open(dir, nil, nil, v.options())
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	require.NoError(t, err)
	defer q.Close()
	counts := map[int]int{}
	ss := q.Select(ctx, labels.MustNewMatcher(labels.MatchEqual, labels.MetricName, "kill"))
	for ss.Next() {
		it := ss.At().Iterator(nil)
		for it.Next() != chunks.ValNone {
			counts[v.batch(it.AtT())]++
		}
	}
	require.NoError(t, ss.Err())
	present = map[int]bool{}
	for k, n := range counts {
		require.Equal(t, v.batchSize(k), n, "batch %d is partial", k)
		present[k] = true
		last = max(last, k)
	}
	return present, last, db.head.minValidTime.Load(), len(db.Blocks())
}

// killChild is the child process: it continues after the last batch in
// the DB and commits batches until it is killed (or for 30 s at most).
func killChild(t *testing.T, dir string, v killVariant) {
	o := v.options()
	o.WALSyncEveryCommit = true
	o.WALSegmentSize = 256 << 10
	db, err := Open(dir, nil, nil, o)
	require.NoError(t, err)
	start := 1
	if maxt := db.Head().MaxTime(); maxt != math.MinInt64 {
		start = v.batch(maxt) + 1
	}
	if counterValue(t, db.walMetrics.snapshotLoads) == 1 {
		fmt.Println("restored from snapshot")
	}
	deadline := time.Now().Add(30 * time.Second)
	for k := start; time.Now().Before(deadline); k++ {
		app := db.Appender(ctx)
		for i := 0; i < killBatchWidth; i++ {
			// A third of the series take integer and a third float
			// histograms: a batch is a commit group of several records.
			var err error
			switch i % 3 {
			case 0:
				_, err = app.Append(0, killLabels(i), int64(k)*v.step, float64(k))
			case 1:
				_, err = app.AppendHistogram(0, killLabels(i), int64(k)*v.step, crashHistogram(k), nil)
			default:
				_, err = app.AppendHistogram(0, killLabels(i), int64(k)*v.step, nil, crashHistogram(k).ToFloat())
			}
			require.NoError(t, err)
			if i%5 == 0 && k > v.lag {
				_, err = app.Append(0, killLabels(i), v.lateTime(k), float64(k))
				require.NoError(t, err, "late sample of batch %d", k)
			}
		}
		require.NoError(t, app.Commit())
		fmt.Printf("committed %d\n", k)
		if k%40 == 0 {
			// Closed chunks into chunks_head/ (head_mmap.go): kills land
			// while those files are written too.
			require.NoError(t, db.Compact(ctx))
		}
	}
	require.FailNow(t, "child was not killed")
}
