package web

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/isotsdb/tsdb/labels"
)

// BenchmarkTSDBStatus serves /api/v1/status/tsdb over 10,000 head series.
func BenchmarkTSDBStatus(b *testing.B) {
	db := &fakeDB{}
	for i := range 10000 {
		db.series = append(db.series, labels.FromStrings("__name__", fmt.Sprintf("metric_%d", i%100),
			"job", fmt.Sprintf("job-%d", i%10), "instance", fmt.Sprintf("host-%d", i)))
	}
	h := NewHandler(db, Options{})
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/status/tsdb", nil))
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
	b.ReportMetric(float64(len(db.series))*float64(b.N)/b.Elapsed().Seconds(), "series/s")
}
