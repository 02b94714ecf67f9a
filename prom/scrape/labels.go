package scrape

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/common/model"
	plabels "github.com/prometheus/prometheus/model/labels"

	"github.com/isotsdb/tsdb/labels"
	promstorage "github.com/isotsdb/tsdb/prom/storage"
)

// checkTargetLabels validates Options.Labels: names that are not empty, not
// reserved (a leading "__", which Prometheus strips from target labels, and
// so __name__ too) and valid UTF-8; values not empty and valid UTF-8; no
// name twice.
func checkTargetLabels(ls labels.Labels) error {
	if name, dup := ls.HasDuplicateNames(); dup {
		return fmt.Errorf("%w: label %q given twice", ErrTargetLabels, name)
	}
	return ls.Validate(func(l labels.Label) error {
		switch {
		case l.Name == "" || !utf8.ValidString(l.Name):
			return fmt.Errorf("%w: invalid label name %q", ErrTargetLabels, l.Name)
		case strings.HasPrefix(l.Name, "__"):
			return fmt.Errorf("%w: reserved label name %q", ErrTargetLabels, l.Name)
		case l.Value == "" || !utf8.ValidString(l.Value):
			return fmt.Errorf("%w: label %q has an empty or invalid value %q", ErrTargetLabels, l.Name, l.Value)
		}
		return nil
	})
}

// labelMerger adds the target labels to scraped label sets, as
// Prometheus's honor_labels setting says. Its buffers are reused; not safe
// for concurrent use.
type labelMerger struct {
	target    labels.Labels
	honor     bool
	sb        labels.ScratchBuilder
	lb        *labels.Builder
	conflicts []labels.Label
}

func newLabelMerger(target labels.Labels, honor bool) *labelMerger {
	return &labelMerger{target: target, honor: honor, lb: labels.NewBuilder(labels.EmptyLabels())}
}

// merge returns the series' labels in the database: the scraped set pl
// with the target labels added.
//
// With honor set, a scraped label wins over the target label of the same
// name. Without it the target label wins and the scraped one is kept as
// exported_<name> (exported_exported_<name> if that is taken, and so on),
// the conflicts handled shortest name first: Prometheus's rule.
func (m *labelMerger) merge(pl plabels.Labels) labels.Labels {
	scraped := promstorage.FromPromLabels(&m.sb, pl)
	if m.target.IsEmpty() {
		return scraped
	}
	m.lb.Reset(scraped)
	m.conflicts = m.conflicts[:0]
	m.target.Range(func(l labels.Label) {
		v := scraped.Get(l.Name)
		switch {
		case v == "":
			m.lb.Set(l.Name, l.Value)
		case !m.honor:
			m.conflicts = append(m.conflicts, labels.Label{Name: l.Name, Value: v})
			m.lb.Set(l.Name, l.Value)
		}
	})
	slices.SortStableFunc(m.conflicts, func(a, b labels.Label) int { return len(a.Name) - len(b.Name) })
	for _, c := range m.conflicts {
		name := c.Name
		for {
			name = model.ExportedLabelPrefix + name
			if m.lb.Get(name) == "" {
				m.lb.Set(name, c.Value)
				break
			}
		}
	}
	return m.lb.Labels()
}

// reportLabels returns the labels of the report series name: the name and
// the target labels.
func reportLabels(name string, target labels.Labels) labels.Labels {
	b := labels.NewBuilder(target)
	b.Set(model.MetricNameLabel, name)
	return b.Labels()
}

// hasTargetLabels reports whether ls carries every target label with its
// value.
func hasTargetLabels(ls, target labels.Labels) bool {
	ok := true
	target.Range(func(l labels.Label) {
		if ok && ls.Get(l.Name) != l.Value {
			ok = false
		}
	})
	return ok
}
