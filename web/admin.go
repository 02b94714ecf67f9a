package web

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/isotsdb/tsdb/labels"
)

// snapshotData is the data of a successful snapshot response.
type snapshotData struct {
	// Name is the snapshot's directory name in the snapshot directory.
	Name string `json:"name"`
}

// snapshot writes a snapshot into a new directory of the snapshot
// directory, with the head unless skip_head is true.
func (h *handler) snapshot(r *http.Request) (any, *apiError) {
	if err := r.ParseForm(); err != nil {
		return nil, badData("", fmt.Errorf("error parsing form values: %w", err))
	}
	skipHead := false
	if v := r.Form.Get("skip_head"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, badData("skip_head", fmt.Errorf("unable to parse boolean: %w", err))
		}
		skipHead = b
	}
	name, err := snapshotName(time.Now())
	if err != nil {
		return nil, internal(err)
	}
	dir := filepath.Join(h.opts.SnapshotDir, name)
	if err := h.db.Snapshot(dir, !skipHead); err != nil {
		return nil, internal(fmt.Errorf("create snapshot: %w", err))
	}
	h.logger.Info("web: snapshot created", "dir", dir, "with_head", !skipHead)
	return snapshotData{Name: name}, nil
}

// snapshotName names a snapshot as Prometheus does: the UTC time and a
// random 64-bit number in hex, e.g. 20240101T120000Z-5f0c3a1e9b2d4c67.
func snapshotName(now time.Time) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("snapshot name: %w", err)
	}
	return fmt.Sprintf("%s-%016x", now.UTC().Format("20060102T150405Z0700"), binary.BigEndian.Uint64(b[:])), nil
}

// deleteSeries deletes [start, end] of the series matching any match[]
// selector. All parameters are checked before anything is deleted, so a
// bad request changes nothing. It gives up when the request's context is
// done (the client went away), also while waiting behind a compaction.
func (h *handler) deleteSeries(r *http.Request) (any, *apiError) {
	if err := r.ParseForm(); err != nil {
		return nil, badData("", fmt.Errorf("error parsing form values: %w", err))
	}
	selectors := r.Form["match[]"]
	if len(selectors) == 0 {
		return nil, badData("", errors.New("no match[] parameter provided"))
	}
	start, apiErr := timeParam(r, "start", math.MinInt64)
	if apiErr != nil {
		return nil, apiErr
	}
	end, apiErr := timeParam(r, "end", math.MaxInt64)
	if apiErr != nil {
		return nil, apiErr
	}
	if start > end {
		return nil, badData("end", fmt.Errorf("end %d is before start %d", end, start))
	}
	sets := make([][]*labels.Matcher, len(selectors))
	for i, s := range selectors {
		ms, err := labels.ParseSelector(s)
		if err != nil {
			return nil, badData("match[]", err)
		}
		sets[i] = ms
	}
	for i, ms := range sets {
		if err := h.db.Delete(r.Context(), start, end, ms...); err != nil {
			return nil, internal(fmt.Errorf("delete %s: %w", selectors[i], err))
		}
		h.logger.Info("web: series deleted", "match", selectors[i], "start", start, "end", end)
	}
	return nil, nil
}

// cleanTombstones rewrites the blocks with deletions. It gives up when the
// request's context is done (the client went away).
func (h *handler) cleanTombstones(r *http.Request) (any, *apiError) {
	if err := h.db.CleanTombstones(r.Context()); err != nil {
		return nil, internal(fmt.Errorf("clean tombstones: %w", err))
	}
	h.logger.Info("web: tombstones cleaned")
	return nil, nil
}
