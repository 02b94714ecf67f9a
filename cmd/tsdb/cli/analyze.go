package cli

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/dustin/go-humanize"

	"github.com/isotsdb/tsdb/check"
	"github.com/isotsdb/tsdb/chunks"
	"github.com/isotsdb/tsdb/labels"
	"github.com/isotsdb/tsdb/vfs"
)

// analyzeConfig is the command line of "tsdb analyze".
type analyzeConfig struct {
	dir string
	// block is a block's ULID, "head", or "" for the newest block (the
	// head if there is no block).
	block string
	limit int // entries per list
}

// runAnalyze prints a cardinality report of one block or of the head.
func runAnalyze(ctx context.Context, cfg analyzeConfig, stdout, stderr io.Writer) int {
	if cfg.limit < 1 {
		fmt.Fprintln(stderr, "tsdb analyze: --limit must be at least 1")
		return exitUsage
	}
	blocks, _, err := listBlocks(cfg.dir, stderr)
	if err != nil {
		return reportError(stderr, "analyze", err)
	}
	var c *cardinality
	switch {
	case cfg.block == "head" || (cfg.block == "" && len(blocks) == 0):
		c, err = analyzeHead(ctx, cfg.dir, stderr)
	case cfg.block == "":
		newest := slices.MaxFunc(blocks, func(a, b diskBlock) int {
			return cmp.Or(cmp.Compare(a.meta.MaxTime, b.meta.MaxTime), a.meta.ULID.Compare(b.meta.ULID))
		})
		c, err = analyzeBlock(ctx, newest)
	default:
		i := slices.IndexFunc(blocks, func(b diskBlock) bool { return b.meta.ULID.String() == cfg.block })
		if i < 0 {
			return reportError(stderr, "analyze", fmt.Errorf("no block %s in %s (give a block's ULID or \"head\")", cfg.block, cfg.dir))
		}
		c, err = analyzeBlock(ctx, blocks[i])
	}
	if err != nil {
		return reportError(stderr, "analyze", err)
	}
	out := bufio.NewWriter(stdout)
	c.write(out, cfg.limit)
	if err := out.Flush(); err != nil {
		return reportError(stderr, "analyze", err)
	}
	return exitOK
}

// ctxCheckEvery is how many series the analysis reads between checks of
// its context.
const ctxCheckEvery = 1024

// analyzeBlock reads the series of a block from its index, labels and
// chunk time ranges, and the encoding and sample count of each chunk from
// the chunk's header; it decodes no samples. Reading the block's files is
// a format read past the public API, through package check: see "the
// exception" in main.go.
func analyzeBlock(ctx context.Context, b diskBlock) (*cardinality, error) {
	c := newCardinality("Block ID: "+b.meta.ULID.String(), b.meta.MinTime, b.meta.MaxTime)
	c.span = fmt.Sprintf("%s to %s (%s)", formatTime(b.meta.MinTime), formatTime(b.meta.MaxTime), formatSpan(b.meta.MinTime, b.meta.MaxTime))
	c.chunksKnown = true
	n := 0
	err := check.BlockChunks(vfs.OS(), b.dir, func(lset labels.Labels, chks []check.ChunkInfo) error {
		if n%ctxCheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		n++
		if len(chks) == 0 {
			return nil
		}
		var st sampleCounts
		for _, ch := range chks {
			if ch.Encoding.IsHistogram() {
				st.histChunks++
				st.histSamples += int64(ch.Samples)
			} else {
				st.floatChunks++
				st.floatSamples += int64(ch.Samples)
			}
		}
		c.add(lset, chks[0].MinTime, chks[len(chks)-1].MaxTime)
		c.addCounts(st)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// analyzeHead reads the series of the head (opened read-only, replaying
// the WAL) and the time of their first and last samples.
func analyzeHead(ctx context.Context, dir string, stderr io.Writer) (*cardinality, error) {
	db, err := openReadOnly(dir, stderr)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	h := db.Head()
	mint, maxt := h.MinTime(), h.MaxTime()
	if h.NumSeries() == 0 || mint == math.MaxInt64 {
		return newCardinality("Head", 0, 0), nil
	}
	c := newCardinality("Head", mint, maxt+1)
	c.span = fmt.Sprintf("%s to %s, first to last sample (%s)", formatTime(mint), formatTime(maxt), formatSpan(mint, maxt))
	q, err := db.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	defer q.Close()
	ss := q.Select(ctx)
	for ss.Next() {
		s := ss.At()
		it := s.Iterator(nil)
		first, last, n := int64(0), int64(0), 0
		var st sampleCounts
		for vt := it.Next(); vt != chunks.ValNone; vt = it.Next() {
			t := it.AtT()
			if n == 0 {
				first = t
			}
			last = t
			n++
			if vt == chunks.ValFloat {
				st.floatSamples++
			} else {
				st.histSamples++
			}
		}
		if err := it.Err(); err != nil {
			return nil, err
		}
		if n > 0 {
			c.add(s.Labels(), first, last)
			c.addCounts(st)
		}
	}
	return c, ss.Err()
}

// cardinality accumulates the series of one block (or the head) for the
// report.
type cardinality struct {
	title      string
	span       string // the time range, for humans
	mint, maxt int64  // the range analysed, [mint, maxt)
	// tolerance: a series churns if its first sample comes more than this
	// after mint, or its last more than this before maxt. A series scraped
	// all along has its first and last sample within one scrape interval
	// of the edges; 5% of the range leaves room for intervals of minutes.
	tolerance int64
	series    int
	churned   int
	pairs     map[labels.Label]int // series per label pair
	names     map[string]int       // series per label name
	// churnPairs and churnNames count the churning series.
	churnPairs map[labels.Label]int
	churnNames map[string]int

	// counts sums the samples (and chunks, if chunksKnown) of all series
	// by type; floatSeries and histSeries count the series that have
	// float, respectively native histogram, samples (a series may have
	// both).
	counts                  sampleCounts
	chunksKnown             bool
	floatSeries, histSeries int
}

// sampleCounts counts samples and chunks by type: floats (XOR chunks) and
// native histograms (integer and float, either histogram encoding).
type sampleCounts struct {
	floatSamples, histSamples int64
	floatChunks, histChunks   int64
}

// addCounts adds the counts of one series, which add counted.
func (c *cardinality) addCounts(st sampleCounts) {
	c.counts.floatSamples += st.floatSamples
	c.counts.histSamples += st.histSamples
	c.counts.floatChunks += st.floatChunks
	c.counts.histChunks += st.histChunks
	if st.floatSamples > 0 {
		c.floatSeries++
	}
	if st.histSamples > 0 {
		c.histSeries++
	}
}

func newCardinality(title string, mint, maxt int64) *cardinality {
	return &cardinality{title: title, mint: mint, maxt: maxt, tolerance: (maxt - mint) / 20,
		pairs: map[labels.Label]int{}, names: map[string]int{},
		churnPairs: map[labels.Label]int{}, churnNames: map[string]int{}}
}

// add counts a series whose samples span [first, last].
func (c *cardinality) add(ls labels.Labels, first, last int64) {
	c.series++
	churn := first > c.mint+c.tolerance || last < c.maxt-1-c.tolerance
	if churn {
		c.churned++
	}
	ls.Range(func(l labels.Label) {
		c.pairs[l]++
		c.names[l.Name]++
		if churn {
			c.churnPairs[l]++
			c.churnNames[l.Name]++
		}
	})
}

// countItem is one line of a top list.
type countItem struct {
	n    int
	name string
}

// write prints the report, each list cut to limit entries.
func (c *cardinality) write(w io.Writer, limit int) {
	fmt.Fprintln(w, c.title)
	if c.series == 0 {
		fmt.Fprintln(w, "No series.")
		return
	}
	entries := 0
	values := map[string]int{}   // distinct values per name
	valueLen := map[string]int{} // their total length
	var metrics []countItem
	for l, n := range c.pairs {
		entries += n
		values[l.Name]++
		valueLen[l.Name] += len(l.Value)
		if l.Name == labels.MetricName {
			metrics = append(metrics, countItem{n, l.Value})
		}
	}
	fmt.Fprintf(w, "Time range: %s\n", c.span)
	fmt.Fprintf(w, "Series: %s\n", humanize.Comma(int64(c.series)))
	ct := c.counts
	fmt.Fprintf(w, "Series with float samples: %s, with native histogram samples: %s\n",
		humanize.Comma(int64(c.floatSeries)), humanize.Comma(int64(c.histSeries)))
	if c.chunksKnown {
		fmt.Fprintf(w, "Chunks: %s (float: %s, histogram: %s)\n", humanize.Comma(ct.floatChunks+ct.histChunks),
			humanize.Comma(ct.floatChunks), humanize.Comma(ct.histChunks))
	}
	fmt.Fprintf(w, "Samples: %s (float: %s, histogram: %s)\n", humanize.Comma(ct.floatSamples+ct.histSamples),
		humanize.Comma(ct.floatSamples), humanize.Comma(ct.histSamples))
	fmt.Fprintf(w, "Label names: %s\n", humanize.Comma(int64(len(c.names))))
	fmt.Fprintf(w, "Postings (unique label pairs): %s\n", humanize.Comma(int64(len(c.pairs))))
	fmt.Fprintf(w, "Postings entries (total label pairs): %s\n", humanize.Comma(int64(entries)))
	fmt.Fprintf(w, "Churn: %s of %s series (%.1f%%) start or end more than %s inside the time range\n",
		humanize.Comma(int64(c.churned)), humanize.Comma(int64(c.series)), 100*float64(c.churned)/float64(c.series),
		formatSpan(0, c.tolerance))

	if c.churned > 0 {
		writeTop(w, "Label pairs most involved in churning", pairItems(c.churnPairs), limit)
		writeTop(w, "Label names most involved in churning", nameItems(c.churnNames), limit)
	}
	writeTop(w, "Highest cardinality labels (label names by number of values)", nameItems(values), limit)
	writeTop(w, "Highest cardinality metric names (series per metric name)", metrics, limit)
	writeTop(w, "Most common label pairs (series per label pair)", pairItems(c.pairs), limit)
	writeTop(w, "Label names by series count", nameItems(c.names), limit)
	writeTop(w, "Label names with the highest cumulative length of their values (bytes)", nameItems(valueLen), limit)
}

func pairItems(m map[labels.Label]int) []countItem {
	out := make([]countItem, 0, len(m))
	for l, n := range m {
		out = append(out, countItem{n, l.Name + "=" + l.Value})
	}
	return out
}

func nameItems(m map[string]int) []countItem {
	out := make([]countItem, 0, len(m))
	for name, n := range m {
		out = append(out, countItem{n, name})
	}
	return out
}

// writeTop prints the limit items with the highest counts (ties by name),
// counts right-aligned.
func writeTop(w io.Writer, title string, items []countItem, limit int) {
	slices.SortFunc(items, func(a, b countItem) int {
		return cmp.Or(cmp.Compare(b.n, a.n), strings.Compare(a.name, b.name))
	})
	items = items[:min(limit, len(items))]
	fmt.Fprintf(w, "\n%s:\n", title)
	width := 0
	for _, it := range items {
		width = max(width, len(humanize.Comma(int64(it.n))))
	}
	for _, it := range items {
		fmt.Fprintf(w, "%*s  %s\n", width, humanize.Comma(int64(it.n)), it.name)
	}
}
