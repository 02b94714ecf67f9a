package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// userAgent is sent with every request.
const userAgent = "isotsdb-remote-write/1.0"

// client posts remote-write requests of one message type. Safe for
// concurrent use.
type client struct {
	url     string
	hc      *http.Client
	timeout time.Duration
	headers map[string]string
	msg     ProtobufMessage
}

// post sends one snappy-compressed request of c.msg, with the content
// type and version header Prometheus's client sends with it. It returns nil on a 2xx
// answer; otherwise the error (an *HTTPError for a non-2xx answer) and,
// for 429 and 5xx answers that carry one, the delay asked by Retry-After.
func (c *client) post(ctx context.Context, body []byte) (retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("remote: new request: %w", err)
	}
	for k, v := range c.headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("User-Agent", userAgent)
	if c.msg == WriteV2 {
		req.Header.Set("Content-Type", "application/x-protobuf;proto="+string(WriteV2))
		req.Header.Set("X-Prometheus-Remote-Write-Version", "2.0.0")
	} else {
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, fmt.Errorf("remote: post: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // lets the connection be reused
		return 0, nil
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	herr := &HTTPError{Status: resp.StatusCode, Body: string(bytes.TrimSpace(msg))}
	if c.msg == WriteV2 {
		herr.Written = parseWritten(resp.Header)
	}
	if retryableStatus(resp.StatusCode) {
		retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return retryAfter, herr
}

// The headers in which a remote write 2.0 receiver reports what it stored
// of a request.
const (
	writtenSamplesHeader    = "X-Prometheus-Remote-Write-Samples-Written"
	writtenHistogramsHeader = "X-Prometheus-Remote-Write-Histograms-Written"
	writtenExemplarsHeader  = "X-Prometheus-Remote-Write-Exemplars-Written"
)

// parseWritten reads a 2.0 receiver's written counts from h: nil if it
// sets none of the headers. A header missing or not a count reads as 0,
// as in Prometheus's client.
func parseWritten(h http.Header) *Written {
	var w Written
	found := false
	for _, f := range []struct {
		name string
		n    *int
	}{{writtenSamplesHeader, &w.Samples}, {writtenHistogramsHeader, &w.Histograms}, {writtenExemplarsHeader, &w.Exemplars}} {
		v := h.Get(f.name)
		if v == "" {
			continue
		}
		found = true
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			*f.n = n
		}
	}
	if !found {
		return nil
	}
	return &w
}

// parseRetryAfter reads a Retry-After value: seconds, or an HTTP date
// (then the time left until it). Anything else, or a time in the past,
// gives 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(min(s, int64(24*time.Hour/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
