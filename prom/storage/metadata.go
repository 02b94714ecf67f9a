package promstorage

import (
	"github.com/prometheus/common/model"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"

	"github.com/isotsdb/tsdb"
)

// FromPromMetadata converts Prometheus's metadata to isotsdb's. The empty
// type and "unknown" are tsdb.MetricTypeUnknown; so is a type name isotsdb
// does not know, as Prometheus's WAL encoding maps it.
func FromPromMetadata(m metadata.Metadata) tsdb.Metadata {
	t, _ := tsdb.ParseMetricType(string(m.Type))
	return tsdb.Metadata{Type: t, Unit: m.Unit, Help: m.Help}
}

// ToPromMetadata converts isotsdb's metadata to Prometheus's. The unknown
// type becomes model.MetricTypeUnknown ("unknown"), as Prometheus's head
// returns it after reading its WAL.
func ToPromMetadata(m tsdb.Metadata) metadata.Metadata {
	return metadata.Metadata{Type: model.MetricType(m.Type.String()), Unit: m.Unit, Help: m.Help}
}

// UpdateMetadata implements storage.MetadataUpdater: the metadata is
// buffered in the transaction and applied at Commit with its samples
// (tsdb.Appender.UpdateMetadata). As in Prometheus, the series must exist
// (an Append of it, in this transaction or an earlier one, created it);
// otherwise the error wraps tsdb.ErrUnknownSeries. Unchanged metadata is
// not logged again.
func (a *appender) UpdateMetadata(ref storage.SeriesRef, ls plabels.Labels, m metadata.Metadata) (storage.SeriesRef, error) {
	return a.updateMetadata(ref, ls, m)
}

// updateMetadata buffers m for the series ref or ls.
func (b *base) updateMetadata(ref storage.SeriesRef, ls plabels.Labels, m metadata.Metadata) (storage.SeriesRef, error) {
	r, err := b.app.UpdateMetadata(tsdb.SeriesRef(ref), borrowOurLabels(&b.lb, ls), FromPromMetadata(m))
	if err != nil {
		return 0, err
	}
	return storage.SeriesRef(r), nil
}
