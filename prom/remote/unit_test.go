package remote

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb/internal/record"
	"github.com/isotsdb/tsdb/internal/wlog"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"-3", 0},
		{"7", 7 * time.Second},
		{"99999999", 24 * time.Hour},
		{"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
	} {
		require.Equal(t, tc.want, parseRetryAfter(tc.in, now), tc.in)
	}
}

func TestDesiredShards(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		cur, minS, maxS, pend int
		failing               bool
		want                  int
	}{
		{name: "busy doubles", cur: 2, minS: 1, maxS: 10, pend: 1500, want: 4},
		{name: "busy capped", cur: 8, minS: 1, maxS: 10, pend: 7000, want: 10},
		{name: "busy but failing", cur: 2, minS: 1, maxS: 10, pend: 1500, failing: true, want: 2},
		{name: "idle halves", cur: 8, minS: 1, maxS: 10, pend: 10, want: 4},
		{name: "idle floor", cur: 1, minS: 1, maxS: 10, pend: 0, want: 1},
		{name: "middle keeps", cur: 4, minS: 1, maxS: 10, pend: 1000, want: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, desiredShards(tc.cur, tc.minS, tc.maxS, 1000, tc.pend, tc.failing))
		})
	}
}

func TestTracker(t *testing.T) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "g"})
	tr := newTracker(wlog.Position{Segment: 3, Offset: 10}, g)
	at := func(off int64) wlog.Position { return wlog.Position{Segment: 3, Offset: off} }
	a := tr.add(at(20), 2)
	b := tr.add(at(30), 0)
	c := tr.add(at(40), 1)
	_ = b
	p, pending := tr.position()
	require.Equal(t, at(10), p)
	require.Equal(t, 3, pending)
	tr.done(c, 1) // out of order: a still pending
	p, _ = tr.position()
	require.Equal(t, at(10), p)
	tr.done(a, 1)
	p, _ = tr.position()
	require.Equal(t, at(10), p)
	tr.done(a, 1)
	p, pending = tr.position()
	require.Equal(t, at(40), p)
	require.Zero(t, pending)
	tr.add(at(50), 0)
	p, _ = tr.position()
	require.Equal(t, at(50), p)
	require.Equal(t, int64(3), tr.ackedSeg.Load())
}

func TestPositionFile(t *testing.T) {
	path := positionPath(t.TempDir(), "x")
	_, ok, err := readPosition(path)
	require.NoError(t, err)
	require.False(t, ok)
	want := wlog.Position{Segment: 12, Offset: 34567}
	require.NoError(t, writePosition(path, want))
	got, ok, err := readPosition(path)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, want, got)
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file left")

	for _, bad := range []string{"", "{", `{"segment":-1,"offset":0}`, `{"segment":1,"offset":-5}`, "[]"} {
		_, err := decodePosition([]byte(bad))
		require.ErrorIs(t, err, ErrPositionFile, bad)
	}
}

func FuzzDecodePosition(f *testing.F) {
	f.Add([]byte(`{"segment":1,"offset":2}`))
	f.Add([]byte(`{"segment":0,"offset":0}` + "\n"))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodePosition(b)
		if err != nil {
			require.ErrorIs(t, err, ErrPositionFile)
			return
		}
		q, err := decodePosition(encodePosition(p))
		require.NoError(t, err)
		require.Equal(t, p, q)
	})
}

// TestReadSegmentResume writes records of many sizes (some spanning
// pages) into a segment and checks that reading from the end of every
// record yields exactly the records after it, and that a torn tail is
// reported as errTornTail with the records before it read.
func TestReadSegmentResume(t *testing.T) {
	for _, compress := range []bool{false, true} {
		dir := t.TempDir()
		w, err := wlog.Open(nil, nil, vfs.OS(), dir, wlog.Options{SegmentSize: 16 << 20, Compression: compressionOf(compress)})
		require.NoError(t, err)
		var recs [][]byte
		for i := range 120 {
			rec := make([]byte, 1+(i*977)%(2*wlog.PageSize+100))
			rec[0] = byte(record.Samples)
			for j := 1; j < len(rec); j++ {
				rec[j] = byte(i + j*7)
			}
			recs = append(recs, rec)
			require.NoError(t, w.Log(rec))
		}
		require.NoError(t, w.Close())
		path := wlog.SegmentName(dir, 0)

		var ends []int64
		_, err = readSegment(path, 0, func(rec []byte, end int64) error {
			require.Equal(t, recs[len(ends)], rec)
			ends = append(ends, end)
			return nil
		})
		require.NoError(t, err)
		require.Len(t, ends, len(recs))
		for i, off := range ends {
			n := i + 1
			_, err := readSegment(path, off, func(rec []byte, end int64) error {
				require.Equal(t, recs[n], rec)
				require.Equal(t, ends[n], end)
				n++
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, len(recs), n, "resumed at %d", off)
		}

		// Cut the file inside the last record.
		cut := ends[len(ends)-2] + (ends[len(ends)-1]-ends[len(ends)-2])/2
		require.NoError(t, os.Truncate(path, cut))
		last, err := readSegment(path, ends[len(ends)-3], func([]byte, int64) error { return nil })
		require.True(t, errors.Is(err, errTornTail), "%v", err)
		require.Equal(t, ends[len(ends)-2], last)
	}
}

// TestSeriesMap checks external labels and relabeling.
func TestSeriesMap(t *testing.T) {
	m := newSeriesMap(promLabels("cluster", "c1", "i", "ext"), dropJob("j1"))
	m.set(1, labels.FromStrings("__name__", "m", "i", "1", "job", "j0"), 0)
	m.set(2, labels.FromStrings("__name__", "m", "i", "2", "job", "j1"), 0)
	require.NotNil(t, m.get(1))
	require.Nil(t, m.get(2), "dropped by relabeling")
	require.Nil(t, m.get(3), "unknown")
	var got []string
	for _, l := range m.get(1).labels {
		got = append(got, l.Name+"="+l.Value)
	}
	require.Equal(t, []string{"__name__=m", "cluster=c1", "i=1", "job=j0"}, got, "the series' own label wins over an external one")

	m.set(3, labels.FromStrings("__name__", "m", "i", "3"), 5)
	require.Equal(t, 1, m.gc(4, map[uint64]struct{}{1: {}}), "series 2 (dropped, segment 0) forgotten")
	require.NotNil(t, m.get(1), "kept by the checkpoint")
	require.NotNil(t, m.get(3), "defined after the checkpoint")
	require.Len(t, m.refs, 2)
}

func compressionOf(on bool) wlog.CompressionType {
	if on {
		return wlog.CompressionSnappy
	}
	return wlog.CompressionNone
}

func promLabels(ss ...string) plabels.Labels { return plabels.FromStrings(ss...) }

// dropJob returns a relabel config dropping series whose job is job.
func dropJob(job string) []*relabel.Config {
	return []*relabel.Config{{
		SourceLabels:         model.LabelNames{"job"},
		Separator:            ";",
		Regex:                relabel.MustNewRegexp(job),
		Action:               relabel.Drop,
		NameValidationScheme: model.UTF8Validation,
	}}
}

// TestItemSize guards the size of a queued item: shards copy items in
// and out of their queues, and a float sample, the common item, needs no
// more than its series, metadata, times, value and sequence number.
func TestItemSize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(item{}), uintptr(56))
}

func TestParseWritten(t *testing.T) {
	for _, tc := range []struct {
		name    string
		headers map[string]string
		want    *Written
	}{
		{"none", nil, nil},
		{"all", map[string]string{writtenSamplesHeader: "7", writtenHistogramsHeader: "2", writtenExemplarsHeader: "1"}, &Written{7, 2, 1}},
		{"samples only", map[string]string{writtenSamplesHeader: "3"}, &Written{Samples: 3}},
		{"zero", map[string]string{writtenSamplesHeader: "0"}, &Written{}},
		{"garbage", map[string]string{writtenSamplesHeader: "x", writtenExemplarsHeader: "-4"}, &Written{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for k, v := range tc.headers {
				h.Set(k, v)
			}
			require.Equal(t, tc.want, parseWritten(h))
		})
	}
}
