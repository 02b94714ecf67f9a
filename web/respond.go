package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
)

// errorType is the errorType field of an error response; the values are
// Prometheus's.
type errorType string

const (
	errorBadData     errorType = "bad_data"
	errorInternal    errorType = "internal"
	errorUnavailable errorType = "unavailable"
	errorNotFound    errorType = "not_found"
)

// apiError is an error with its errorType and HTTP status.
type apiError struct {
	typ    errorType
	status int
	err    error
}

// Error implements error.
func (e *apiError) Error() string { return string(e.typ) + ": " + e.err.Error() }

// Unwrap returns the cause.
func (e *apiError) Unwrap() error { return e.err }

// ErrAdminDisabled is the error answering admin requests without
// Options.EnableAdmin (its text contains Prometheus's, "admin APIs
// disabled").
var ErrAdminDisabled = errors.New("web: admin APIs disabled")

// badData returns a 400 "bad_data" error about the request parameter
// param ("" if the problem is not about one parameter).
func badData(param string, err error) *apiError {
	if param != "" {
		err = fmt.Errorf("invalid parameter %q: %w", param, err)
	}
	return &apiError{typ: errorBadData, status: http.StatusBadRequest, err: err}
}

// internal returns a 500 "internal" error: the database failed.
func internal(err error) *apiError {
	return &apiError{typ: errorInternal, status: http.StatusInternalServerError, err: err}
}

// adminDisabled is Prometheus's answer to an admin request when the admin
// API is off: errorType "unavailable", which its API maps to status 500
// (it reserves 503 for timeouts).
func adminDisabled() *apiError {
	return &apiError{typ: errorUnavailable, status: http.StatusInternalServerError, err: ErrAdminDisabled}
}

// response is Prometheus's JSON envelope.
type response struct {
	Status    string    `json:"status"`
	Data      any       `json:"data,omitempty"`
	ErrorType errorType `json:"errorType,omitempty"`
	Error     string    `json:"error,omitempty"`
}

// respond writes a success response: data in the envelope, or 204 and no
// body if data is nil.
func respond(w http.ResponseWriter, logger *slog.Logger, data any) {
	if data == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, logger, http.StatusOK, response{Status: "success", Data: data})
}

// respondError writes an error response.
func respondError(w http.ResponseWriter, logger *slog.Logger, e *apiError) {
	writeJSON(w, logger, e.status, response{Status: "error", ErrorType: e.typ, Error: e.err.Error()})
}

func writeJSON(w http.ResponseWriter, logger *slog.Logger, status int, r response) {
	b, err := json.Marshal(r)
	if err != nil {
		logger.Error("web: encoding response", "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if _, err := w.Write(b); err != nil {
		logger.Debug("web: writing response", "err", err)
	}
}
