package labels

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// loadCorpus returns the label sets of the shared 20k-series corpus.
func loadCorpus(b *testing.B) []Labels {
	b.Helper()
	lines := corpusLines(b, 0)
	out := make([]Labels, len(lines))
	for i, line := range lines {
		require.NoError(b, out[i].UnmarshalJSON(line), "line %d", i+1)
	}
	return out
}

func tenLabels() []Label {
	return []Label{
		{"__name__", "http_requests_total"}, {"code", "200"}, {"handler", "/api/v1/query"},
		{"instance", "10.0.0.1:9090"}, {"job", "prometheus"}, {"method", "GET"},
		{"namespace", "monitoring"}, {"pod", "prometheus-0"}, {"service", "prometheus"},
		{"zone", "eu-west-1a"},
	}
}

func BenchmarkNew(b *testing.B) {
	sorted := tenLabels()
	reversed := slices.Clone(sorted)
	slices.Reverse(reversed)
	for _, c := range []struct {
		name string
		ls   []Label
	}{{"10-sorted", sorted}, {"10-unsorted", reversed}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = New(c.ls...)
			}
		})
	}
	b.Run("10-scratch-builder", func(b *testing.B) {
		b.ReportAllocs()
		sb := NewScratchBuilder(10)
		for b.Loop() {
			sb.Reset()
			for _, l := range sorted {
				sb.Add(l.Name, l.Value)
			}
			_ = sb.Labels()
		}
	})
	b.Run("10-builder-set-1", func(b *testing.B) {
		b.ReportAllocs()
		base := New(sorted...)
		bl := NewBuilder(base)
		for b.Loop() {
			bl.Reset(base)
			_ = bl.Set("job", "other").Labels()
		}
	})
}

func BenchmarkGet(b *testing.B) {
	ls := New(tenLabels()...)
	for _, name := range []string{"__name__", "instance", "zone", "absent", "aaa"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = ls.Get(name)
			}
		})
	}
}

func BenchmarkHash(b *testing.B) {
	b.Run("10-labels", func(b *testing.B) {
		ls := New(tenLabels()...)
		b.SetBytes(int64(ls.ByteSize()))
		b.ReportAllocs()
		for b.Loop() {
			_ = ls.Hash()
		}
	})
	b.Run("big-3KiB", func(b *testing.B) {
		ls := FromStrings("a", strings.Repeat("x", 1000), "b", strings.Repeat("y", 1000), "c", strings.Repeat("z", 1000))
		b.SetBytes(int64(ls.ByteSize()))
		b.ReportAllocs()
		for b.Loop() {
			_ = ls.Hash()
		}
	})
	b.Run("corpus-20k", func(b *testing.B) {
		corpus := loadCorpus(b)
		size := 0
		for _, ls := range corpus {
			size += ls.ByteSize()
		}
		b.SetBytes(int64(size))
		b.ReportAllocs()
		for b.Loop() {
			for _, ls := range corpus {
				_ = ls.Hash()
			}
		}
	})
}

func BenchmarkCompare(b *testing.B) {
	base := tenLabels()
	a := New(base...)
	lastDiffers := slices.Clone(base)
	lastDiffers[9].Value = "eu-west-1b"
	firstDiffers := slices.Clone(base)
	firstDiffers[0].Value = "http_requests_totals"
	for _, c := range []struct {
		name string
		b    Labels
	}{
		{"equal", New(base...)},
		{"differ-first", New(firstDiffers...)},
		{"differ-last", New(lastDiffers...)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = Compare(a, c.b)
			}
		})
	}
	b.Run("sort-corpus-20k", func(b *testing.B) {
		corpus := loadCorpus(b)
		work := make([]Labels, len(corpus))
		b.ReportAllocs()
		for b.Loop() {
			copy(work, corpus)
			slices.SortFunc(work, Compare)
		}
	})
}

func BenchmarkString(b *testing.B) {
	ls := New(tenLabels()...)
	b.ReportAllocs()
	for b.Loop() {
		_ = ls.String()
	}
}

// BenchmarkMatcher runs each matcher fast path, and the plain anchored
// regexp it replaces, over the corpus' metric names.
func BenchmarkMatcher(b *testing.B) {
	seen := map[string]bool{}
	var names []string
	for _, ls := range loadCorpus(b) {
		n := ls.Get(MetricName)
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
	}
	n0 := names[0]
	var set20 []string
	for i := 0; i < 20; i++ {
		set20 = append(set20, regexp.QuoteMeta(names[i*7%len(names)]))
	}
	cases := []struct {
		name, pattern string
		kind          matchKind
	}{
		{"literal", n0, kindLiteral},
		{"set-3", names[0] + "|" + names[1] + "|" + names[2], kindSet},
		{"set-20", strings.Join(set20, "|"), kindSet},
		{"any", ".*", kindAny},
		{"non-empty", ".+", kindNonEmpty},
		{"prefix", n0[:3] + ".*", kindPrefix},
		{"suffix", ".*" + n0[len(n0)-3:], kindSuffix},
		{"contains", ".*" + n0[3:6] + ".*", kindContains},
		{"fallback-prefix-checked", n0[:3] + "[a-z]+", kindRegexp},
		{"fallback-case-insensitive", "(?i)" + n0[:3] + ".*", kindRegexp},
	}
	for _, c := range cases {
		m := MustNewMatcher(MatchRegexp, MetricName, c.pattern)
		require.Equal(b, c.kind, m.re.kind, "%s: kind", c.name)
		re := regexp.MustCompile("^(?s:" + c.pattern + ")$")
		b.Run(c.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			hits := 0
			for b.Loop() {
				for _, n := range names {
					if m.Matches(n) {
						hits++
					}
				}
			}
			b.ReportMetric(float64(len(names)), "values/op")
		})
		b.Run(c.name+"/regexp", func(b *testing.B) {
			b.ReportAllocs()
			hits := 0
			for b.Loop() {
				for _, n := range names {
					if re.MatchString(n) {
						hits++
					}
				}
			}
			b.ReportMetric(float64(len(names)), "values/op")
		})
	}
	b.Run("NewMatcher", func(b *testing.B) {
		for _, c := range cases[:3] {
			b.Run(c.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					_ = MustNewMatcher(MatchRegexp, "n", c.pattern)
				}
			})
		}
	})
}
