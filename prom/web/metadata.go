package promweb

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"

	"github.com/prometheus/prometheus/model/metadata"

	"github.com/isotsdb/tsdb"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// metadataPath is the endpoint metadataHandler serves.
const metadataPath = "/api/v1/metadata"

// metadataHandler serves GET /api/v1/metadata from the metadata stored
// in the DB (remote write 2.0's inline metadata, tsdb.Appender's
// UpdateMetadata), and passes every other request to next. Prometheus
// answers this endpoint from its scrape targets' caches, which a DB
// without scrapes does not have; the parameters (metric, limit,
// limit_per_metric), the JSON and the errors are Prometheus's. Metric
// names are taken in sorted order where Prometheus takes them in map
// order, so a limit picks the same names on every call.
type metadataHandler struct {
	db   *tsdb.DB
	next http.Handler
}

func (h metadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != metadataPath || r.Method != http.MethodGet {
		h.next.ServeHTTP(w, r)
		return
	}
	limit, err := intParam(r, "limit")
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Status: "error", ErrorType: "bad_data", Error: err.Error()})
		return
	}
	perMetric, err := intParam(r, "limit_per_metric")
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{Status: "error", ErrorType: "bad_data", Error: err.Error()})
		return
	}
	data, err := h.metadata(r, r.FormValue("metric"), limit, perMetric)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, apiError{Status: "error", ErrorType: "internal", Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, apiSuccess{Status: "success", Data: data})
}

// metadata lists the stored metadata of metric (every metric if empty):
// at most limit metric names (limit < 0: all) and at most perMetric
// entries each (perMetric <= 0: all), as Prometheus's endpoint counts.
func (h metadataHandler) metadata(r *http.Request, metric string, limit, perMetric int) (map[string][]metadata.Metadata, error) {
	q, err := h.db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, fmt.Errorf("promweb: metadata: %w", err)
	}
	defer q.Close()
	stored, err := q.Metadata(r.Context(), metric)
	if err != nil {
		return nil, fmt.Errorf("promweb: metadata: %w", err)
	}
	names := make([]string, 0, len(stored))
	for name := range stored {
		names = append(names, name)
	}
	slices.Sort(names)
	out := map[string][]metadata.Metadata{}
	for _, name := range names {
		if limit >= 0 && len(out) >= limit {
			break
		}
		ms := stored[name]
		if perMetric > 0 && len(ms) > perMetric {
			ms = ms[:perMetric]
		}
		conv := make([]metadata.Metadata, len(ms))
		for i, m := range ms {
			conv[i] = promstorage.ToPromMetadata(m)
		}
		out[name] = conv
	}
	return out, nil
}

// intParam parses the integer form value name, -1 if absent, with
// Prometheus's error text.
func intParam(r *http.Request, name string) (int, error) {
	s := r.FormValue(name)
	if s == "" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("%s must be a number", name)
	}
	return n, nil
}

// apiSuccess and apiError are Prometheus's JSON envelope.
type apiSuccess struct {
	Status string `json:"status"`
	Data   any    `json:"data"`
}

type apiError struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
}

// writeJSON writes v as the JSON answer with the status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
