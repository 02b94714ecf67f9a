package tsdb

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// TestHeadChunksLogOrderNotApplyOrder: commit A logs its sample of a
// series before commit B logs a newer one, but B applies first, so A's
// sample goes in as a late one. The WAL holds A's sample before B's, in
// order; the head chunk files hold B's and not A's. After a clean Close
// and Open, the series must still have both.
//
// The WBL copy of A's sample is what tells the replay that the mapped
// chunks do not hold it, so with a damaged WBL (any one byte of its
// records flipped, or a garbage segment before it) A's sample must stay
// too: the replay cannot trust the mapped chunks then.
func TestHeadChunksLogOrderNotApplyOrder(t *testing.T) {
	for _, before := range []int64{10, 0} { // 0: A's sample is the series' first
		t.Run(fmt.Sprintf("before=%d", before), func(t *testing.T) {
			fsys, o, want := testLogOrderNotApplyOrder(t, before)
			// reopen opens a copy and checks every sample is there, and
			// that the replay distrusted the head chunk files exactly
			// when the WBL was damaged.
			reopen := func(t *testing.T, fsys *vfs.MemFS, what string, damaged bool) {
				t.Helper()
				t.Run(what, func(t *testing.T) {
					o := *o
					o.FS = fsys
					var log bytes.Buffer
					db, err := Open("data", slogTo(&log), nil, &o)
					require.NoError(t, err)
					got := allSamples(t, db)
					require.NoError(t, db.Close())
					requireSameSamples(t, want, got)
					require.Equal(t, damaged, strings.Contains(log.String(), "checked against the head chunk files"), "%s", log.String())
					// No sample is skipped as held by the chunks on a
					// damaged WBL's word, and many are on an intact one's.
					m := regexp.MustCompile(`in_mapped_chunks=(\d+)`).FindStringSubmatch(log.String())
					require.NotNil(t, m, "%s", log.String())
					require.Equal(t, damaged, m[1] == "0", "in_mapped_chunks=%s", m[1])
				})
			}
			reopen(t, fsys.Crash(), "intact", false)

			seg := lastWBLSegment(t, fsys)
			b, err := fsys.ReadFile(seg)
			require.NoError(t, err)
			end := len(bytes.TrimRight(b, "\x00")) // the records; zeros pad the page
			require.Positive(t, end)
			for i := range end {
				c := fsys.Crash()
				d := slices.Clone(b)
				d[i] ^= 0x40
				require.NoError(t, c.WriteFile(seg, d, 0o666))
				reopen(t, c, fmt.Sprintf("flipped WBL byte %d of %d", i, end), true)
			}
			c := fsys.Crash()
			require.NoError(t, c.WriteFile("data/wbl/00000000", bytes.Repeat([]byte{0xfe}, 100), 0o666))
			reopen(t, c, "garbage WBL segment first", true)
		})
	}
}

// lastWBLSegment returns the path of the WBL's last segment in data/wbl.
func lastWBLSegment(t *testing.T, fsys *vfs.MemFS) string {
	t.Helper()
	ents, err := fsys.ReadDir("data/wbl")
	require.NoError(t, err)
	var last string
	for _, e := range ents {
		if !e.IsDir() {
			last = e.Name()
		}
	}
	require.NotEmpty(t, last)
	return "data/wbl/" + last
}

// testLogOrderNotApplyOrder builds the case and closes the DB; it returns
// the files, the options and every sample written.
func testLogOrderNotApplyOrder(t *testing.T, before int64) (*vfs.MemFS, *Options, map[string][]sample) {
	fsys := vfs.NewMemFS()
	o := DefaultOptions()
	o.FS = fsys
	o.OutOfOrderTimeWindow = 6 * time.Hour
	o.MinBlockDuration = 24 * time.Hour // no block: every chunk stays in the head
	o.MaxBlockDuration = 24 * time.Hour
	db, err := Open("data", nil, nil, o)
	require.NoError(t, err)
	l := labels.FromStrings(labels.MetricName, "m")
	var want []sample
	add := func(ts int64, v float64) {
		app := db.Appender(ctx)
		_, err := app.Append(0, l, ts, v)
		require.NoError(t, err)
		require.NoError(t, app.Commit())
		want = append(want, sample{T: ts, V: v})
	}
	for k := range before {
		add(k*15000, float64(k))
	}

	// A appends t=150s, logs, and stops before applying.
	logged, resume := make(chan struct{}), make(chan struct{})
	db.head.loggedHook = func(*headAppender) {
		close(logged)
		<-resume
	}
	committed := make(chan error, 1)
	go func() {
		app := db.Appender(ctx)
		if _, err := app.Append(0, l, 150_000, -1); err != nil {
			committed <- err
			return
		}
		committed <- app.Commit()
	}()
	<-logged
	db.head.loggedHook = nil
	// B logs and applies t=165s, then A applies: its sample is late now.
	add(165_000, 11)
	close(resume)
	require.NoError(t, <-committed)
	want = append(want, sample{T: 150_000, V: -1})
	// Enough samples after to close the chunk holding B's and map it.
	for k := int64(12); k < 400; k++ {
		add(k*15000, float64(k))
	}
	require.NoError(t, db.Compact(ctx))
	mapped, _ := headChunkCounts(db)
	require.Positive(t, mapped)
	slices.SortFunc(want, func(a, b sample) int { return cmpInt64(a.T, b.T) })
	all := map[string][]sample{l.String(): want}
	requireSameSamples(t, all, allSamples(t, db))
	require.NoError(t, db.Close())
	return fsys, o, all
}
