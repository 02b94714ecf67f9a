package scrape_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/stretchr/testify/require"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/prom/scrape"
)

const (
	textType = "text/plain; version=0.0.4; charset=utf-8"
	omType   = "application/openmetrics-text; version=1.0.0; charset=utf-8"
)

// TestTextTimestampsAndLabels: a text exposition with a timestamp and
// labels that collide with the target's, under the combinations of
// IgnoreTimestamps and HonorLabels.
func TestTextTimestampsAndLabels(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond)
	own := now.Add(-10 * time.Second)
	body := "# TYPE a gauge\n" +
		`a{job="exposed",exported_job="taken"} 1 ` + itoa(ms(own)) + "\n" +
		`b{instance="x"} 2` + "\n"
	for _, c := range []struct {
		name string
		opts scrape.Options
		want map[string]string // series -> time:value
	}{
		{"default", scrape.Options{}, map[string]string{
			`{__name__="a", exported_exported_job="exposed", exported_job="taken", instance="host:9100", job="app"}`: itoa(ms(own)) + ":1",
			`{__name__="b", exported_instance="x", instance="host:9100", job="app"}`:                                 itoa(ms(now)) + ":2",
		}},
		{"ignore timestamps", scrape.Options{IgnoreTimestamps: true}, map[string]string{
			`{__name__="a", exported_exported_job="exposed", exported_job="taken", instance="host:9100", job="app"}`: itoa(ms(now)) + ":1",
			`{__name__="b", exported_instance="x", instance="host:9100", job="app"}`:                                 itoa(ms(now)) + ":2",
		}},
		{"honor labels", scrape.Options{HonorLabels: true}, map[string]string{
			`{__name__="a", exported_job="taken", instance="host:9100", job="exposed"}`: itoa(ms(own)) + ":1",
			`{__name__="b", instance="x", job="app"}`:                                   itoa(ms(now)) + ":2",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			db := openDB(t, t.TempDir())
			c.opts.Labels = target
			_, err := scrape.New(db, c.opts).ScrapeExposition(context.Background(), []byte(body), textType, now)
			require.NoError(t, err)
			got := map[string]string{}
			for k, pts := range readAll(t, db) {
				if ls := k[len(`{__name__="`):]; ls[0] == 'a' || ls[0] == 'b' {
					require.Len(t, pts, 1)
					got[k] = pts[0].String()
				}
			}
			require.Equal(t, c.want, got)
		})
	}
}

// TestOpenMetrics: an OpenMetrics exposition with a unit, a counter with
// an exemplar (with and without its own timestamp), and a duplicate
// series, which is counted, not stored twice.
func TestOpenMetrics(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	exTs := now.Add(-time.Second)
	body := "# TYPE req_bytes counter\n# UNIT req_bytes bytes\n# HELP req_bytes Requests.\n" +
		`req_bytes_total{path="/"} 3 # {trace_id="t1"} 1 ` + itoa(exTs.Unix()) + "\n" +
		`req_bytes_total{path="/x"} 4 # {trace_id="t2"} 2` + "\n" +
		"# TYPE g gauge\n" +
		"g 1\n" +
		"g 2\n" +
		"# EOF\n"
	db := openDB(t, t.TempDir())
	res, err := scrape.New(db, scrape.Options{Labels: target}).ScrapeExposition(context.Background(), []byte(body), omType, now)
	require.NoError(t, err)
	require.Equal(t, 1, res.Duplicates)
	require.Equal(t, 4, res.Scraped)
	require.Equal(t, 3, res.Samples)
	require.Equal(t, 2, res.Exemplars)
	got := atShort(t, db, ms(now), "app", "host:9100")
	require.Equal(t, "3", got[`req_bytes_total{path="/"}`])
	require.Equal(t, "4", got[`req_bytes_total{path="/x"}`])
	require.Equal(t, "1", got["g"])

	m, ok := seriesMetadata(t, db, labels.FromStrings("__name__", "req_bytes_total", "path", "/", "instance", "host:9100", "job", "app"))
	require.True(t, ok)
	require.Equal(t, tsdb.Metadata{Type: tsdb.MetricTypeCounter, Unit: "bytes", Help: "Requests."}, m)

	ex := exemplarsOf(t, db)
	require.Equal(t, []tsdb.Exemplar{{Labels: labels.FromStrings("trace_id", "t1"), Value: 1, Ts: ms(exTs), HasTs: true}}, ex[`req_bytes_total{path="/"}`])
	// Without a timestamp the exemplar takes the sample's time.
	require.Equal(t, []tsdb.Exemplar{{Labels: labels.FromStrings("trace_id", "t2"), Value: 2, Ts: ms(now)}}, ex[`req_bytes_total{path="/x"}`])
}

// TestMetadataChange: metadata is written for new series and again when a
// family's metadata changes, not on every scrape.
func TestMetadataChange(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	body := "# HELP a First.\n# TYPE a gauge\na{x=\"1\"} 1\na{x=\"2\"} 1\n# HELP b B.\n# TYPE b counter\nb_total 1\n"
	res, err := s.ScrapeExposition(context.Background(), []byte(body), textType, t0)
	require.NoError(t, err)
	require.Equal(t, 3+5, res.Metadata)
	res, err = s.ScrapeExposition(context.Background(), []byte(body), textType, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, 0, res.Metadata)

	body = "# HELP a Second.\n# TYPE a gauge\na{x=\"1\"} 1\na{x=\"2\"} 1\n# HELP b B.\n# TYPE b counter\nb_total 1\n"
	res, err = s.ScrapeExposition(context.Background(), []byte(body), textType, t0.Add(2*time.Second))
	require.NoError(t, err)
	require.Equal(t, 2, res.Metadata)
	m, ok := seriesMetadata(t, db, labels.FromStrings("__name__", "a", "x", "2", "instance", "host:9100", "job", "app"))
	require.True(t, ok)
	require.Equal(t, tsdb.Metadata{Type: tsdb.MetricTypeGauge, Help: "Second."}, m)
	m, ok = seriesMetadata(t, db, labels.FromStrings("__name__", "b_total", "instance", "host:9100", "job", "app"))
	require.True(t, ok)
	require.Equal(t, tsdb.Metadata{Type: tsdb.MetricTypeCounter, Help: "B."}, m)

	// A family without metadata lines after one with them does not take
	// the previous family's.
	_, err = s.ScrapeExposition(context.Background(), []byte("# HELP c C.\n# TYPE c gauge\nc 1\nd 1\n"), textType, t0.Add(3*time.Second))
	require.NoError(t, err)
	_, ok = seriesMetadata(t, db, labels.FromStrings("__name__", "d", "instance", "host:9100", "job", "app"))
	require.False(t, ok)
}

// TestOutOfOrder: samples the database rejects for their time are counted
// and skipped; the rest of the scrape is stored.
func TestOutOfOrder(t *testing.T) {
	db := openDB(t, t.TempDir())
	s := scrape.New(db, scrape.Options{Labels: target})
	t0 := time.Now()
	_, err := s.ScrapeExposition(context.Background(), []byte("a 1 "+itoa(ms(t0))+"\n"), textType, t0)
	require.NoError(t, err)
	res, err := s.ScrapeExposition(context.Background(), []byte("a 2 "+itoa(ms(t0)-1000)+"\nb 1\n"), textType, t0.Add(time.Second))
	require.NoError(t, err)
	require.Equal(t, 1, res.OutOfOrder)
	require.Equal(t, 1, res.Samples)
	require.Equal(t, "1", atShort(t, db, ms(t0.Add(time.Second)), "app", "host:9100")["b"])
}

// TestProtobufExposition: a delimited protobuf body, as a client_golang
// handler serves it, given to ScrapeExposition, stores what
// ScrapeGatherer stores.
func TestProtobufExposition(t *testing.T) {
	reg := newRegistry(t)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	var buf bytes.Buffer
	format := expfmt.NewFormat(expfmt.TypeProtoDelim)
	enc := expfmt.NewEncoder(&buf, format)
	for _, mf := range mfs {
		require.NoError(t, enc.Encode(mf))
	}
	now := time.Now()
	dbA, dbB := openDB(t, t.TempDir()), openDB(t, t.TempDir())
	resA, err := scrape.New(dbA, scrape.Options{Labels: target}).ScrapeExposition(context.Background(), buf.Bytes(), string(format), now)
	require.NoError(t, err)
	resB, err := scrape.New(dbB, scrape.Options{Labels: target}).ScrapeGatherer(context.Background(), reg, now)
	require.NoError(t, err)
	resA.Duration, resB.Duration = 0, 0
	require.Equal(t, resB, resA)
	a, b := atShort(t, dbA, ms(now), "app", "host:9100"), atShort(t, dbB, ms(now), "app", "host:9100")
	delete(a, "scrape_duration_seconds")
	delete(b, "scrape_duration_seconds")
	require.Equal(t, b, a)
	require.Equal(t, "h(count=2,sum=110)", a["size_bytes"])
}
