package scrape

import (
	"errors"
	"testing"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/exemplar"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/textparse"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/labels"
)

// namelessParser is a textparse.Parser at one float sample without a
// metric name, which the parsers of textparse never give.
type namelessParser struct{ textparse.Parser }

func (namelessParser) Series() ([]byte, *int64, float64) { return []byte(`{a="b"}`), nil, 1 }
func (namelessParser) Labels(l *plabels.Labels)          { *l = plabels.FromStrings("a", "b") }
func (namelessParser) Exemplar(*exemplar.Exemplar) bool  { return false }

func TestNoMetricName(t *testing.T) {
	db, err := tsdb.Open(t.TempDir(), nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s := New(db, Options{Labels: labels.FromStrings("job", "j")})
	app := db.Appender(t.Context())
	defer app.Rollback()
	_, _, err = s.appendSample(app, namelessParser{}, false, time.Now().UnixMilli(), &Result{})
	if !errors.Is(err, ErrNoMetricName) {
		t.Fatalf("got %v, want ErrNoMetricName", err)
	}
}

func TestInFamily(t *testing.T) {
	for _, c := range []struct {
		name, family string
		typ          string
		want         bool
	}{
		{"foo_total", "foo", "counter", true},
		{"foo_total", "foo_total", "counter", true},
		{"foo", "foo_total", "counter", true},
		{"foo_created", "foo", "counter", false},
		{"foo_bucket", "foo", "histogram", true},
		{"foo_sum", "foo", "histogram", true},
		{"foo_gsum", "foo", "histogram", false},
		{"foo_gsum", "foo", "gaugehistogram", true},
		{"foo_count", "foo", "summary", true},
		{"foo_bucket", "foo", "summary", false},
		{"foo_info", "foo", "info", true},
		{"foo_sum", "foo", "gauge", false},
		{"bar", "foo", "gauge", false},
		{"foobar_sum", "foo", "histogram", false},
	} {
		if got := inFamily(c.name, c.family, modelType(c.typ)); got != c.want {
			t.Errorf("inFamily(%q, %q, %s) = %v, want %v", c.name, c.family, c.typ, got, c.want)
		}
	}
}

func modelType(s string) model.MetricType { return model.MetricType(s) }
