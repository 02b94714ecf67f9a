package promstorage

import (
	"errors"
	"fmt"
	"regexp"

	plabels "github.com/prometheus/prometheus/model/labels"

	"github.com/isotsdb/tsdb/labels"
)

// toOurLabels converts a Prometheus label set, building it in b (reset
// first). Prometheus label sets are sorted with unique names, so the result
// needs no sorting.
func toOurLabels(b *labels.ScratchBuilder, ls plabels.Labels) labels.Labels {
	b.Reset()
	ls.Range(func(l plabels.Label) { b.Add(l.Name, l.Value) })
	return b.Labels()
}

// borrowOurLabels converts a Prometheus label set for one call that keeps
// no labels (the Appender's methods' series labels: see tsdb.Appender): an
// isotsdb set over the same memory where the encodings agree
// (labels_alias.go), no copy; else built in b, as by toOurLabels. The
// result must not outlive the call: Prometheus may reuse ls's memory
// (ScratchBuilder.Overwrite).
func borrowOurLabels(b *labels.ScratchBuilder, ls plabels.Labels) labels.Labels {
	if labelsAliasing {
		if ours, ok := labels.FromEncoding(promLabelsData(ls)); ok {
			return ours
		}
	}
	return toOurLabels(b, ls)
}

// FromPromLabels converts a Prometheus label set to isotsdb's, building it
// in b (reset first), for callers that feed an isotsdb Appender directly
// (package scrape). The result does not alias ls.
func FromPromLabels(b *labels.ScratchBuilder, ls plabels.Labels) labels.Labels {
	return toOurLabels(b, ls)
}

// toPromLabels converts an isotsdb label set: without copying where the
// encodings agree (labels_alias.go), else building it in b (reset first).
func toPromLabels(b *plabels.ScratchBuilder, ls labels.Labels) plabels.Labels {
	if data := ls.Encoding(); labelsAliasing && len(data) < labels.MaxPromCompatible {
		return aliasPromLabels(data)
	}
	return toPromLabelsCopy(b, ls)
}

// toPromLabelsCopy converts an isotsdb label set, building it in b (reset
// first).
func toPromLabelsCopy(b *plabels.ScratchBuilder, ls labels.Labels) plabels.Labels {
	b.Reset()
	ls.Range(func(l labels.Label) { b.Add(l.Name, l.Value) })
	return b.Labels()
}

// toOurMatchType maps a Prometheus matcher type to isotsdb's.
func toOurMatchType(t plabels.MatchType) (labels.MatchType, bool) {
	switch t {
	case plabels.MatchEqual:
		return labels.MatchEqual, true
	case plabels.MatchNotEqual:
		return labels.MatchNotEqual, true
	case plabels.MatchRegexp:
		return labels.MatchRegexp, true
	case plabels.MatchNotRegexp:
		return labels.MatchNotRegexp, true
	}
	return 0, false
}

// toOurMatchers converts Prometheus matchers. Both sides anchor regular
// expressions the same way ("^(?s:" + value + ")$"), so a matcher selects
// the same series on either side.
//
// One difference is bridged here: Prometheus never compiles a regexp that
// is a plain literal (no metacharacters) and compares label values with it
// directly, so it accepts literals that are not valid UTF-8, which RE2 and
// so isotsdb reject. Such a matcher becomes the equivalent (in)equality
// matcher. An alternation of literals one of which is not valid UTF-8
// ("a|\x80") is accepted by Prometheus too, but has no isotsdb equivalent:
// it is reported as an error.
func toOurMatchers(ms []*plabels.Matcher) ([]*labels.Matcher, error) {
	out := make([]*labels.Matcher, len(ms))
	for i, m := range ms {
		t, ok := toOurMatchType(m.Type)
		if !ok {
			return nil, fmt.Errorf("promstorage: matcher on %q: %w: %d", m.Name, labels.ErrInvalidMatchType, int(m.Type))
		}
		om, err := labels.NewMatcher(t, m.Name, m.Value)
		if err != nil && errors.Is(err, labels.ErrInvalidRegex) && regexp.QuoteMeta(m.Value) == m.Value {
			t = labels.MatchEqual
			if m.Type == plabels.MatchNotRegexp {
				t = labels.MatchNotEqual
			}
			om, err = labels.NewMatcher(t, m.Name, m.Value)
		}
		if err != nil {
			return nil, fmt.Errorf("promstorage: %w", err)
		}
		out[i] = om
	}
	return out, nil
}
