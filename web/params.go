package web

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// ErrInvalidTime is wrapped by the errors of timestamps that do not parse
// or lie outside the range of int64 milliseconds.
var ErrInvalidTime = errors.New("web: invalid timestamp")

// maxUnixSeconds bounds a timestamp in seconds so that it fits int64
// milliseconds after rounding.
const maxUnixSeconds = math.MaxInt64/1000 - 1

// parseTime parses a timestamp of the API, in Unix seconds with an
// optional fraction (rounded to the millisecond, as Prometheus does) or in
// RFC 3339 form, and returns it in milliseconds.
func parseTime(s string) (int64, error) {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || f > maxUnixSeconds || f < -maxUnixSeconds {
			return 0, fmt.Errorf("%w: %q is out of range", ErrInvalidTime, s)
		}
		sec, frac := math.Modf(f)
		return int64(sec)*1000 + int64(math.Round(frac*1000)), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UnixMilli(), nil
	}
	return 0, fmt.Errorf("%w: cannot parse %q as Unix seconds or RFC 3339", ErrInvalidTime, s)
}

// timeParam returns the timestamp in the form value name of r, or def if
// it is absent or empty. The caller has parsed the form.
func timeParam(r *http.Request, name string, def int64) (int64, *apiError) {
	v := r.Form.Get(name)
	if v == "" {
		return def, nil
	}
	t, err := parseTime(v)
	if err != nil {
		return 0, badData(name, err)
	}
	return t, nil
}
