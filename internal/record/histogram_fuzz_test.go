package record

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

// reencodeHistograms writes decoded samples back in a record of the same
// layout as rec: V2 as V2; V1 all in one custom-bucket record, which holds
// any schema and keeps the order.
func reencodeHistograms(rec []byte, s []RefHistogramSample) []byte {
	var enc Encoder
	if Type(rec[0]) == HistogramSamplesV2 {
		return enc.HistogramSamplesV2(s, nil)
	}
	return enc.CustomBucketsHistogramSamples(s, nil)
}

func reencodeFloatHistograms(rec []byte, s []RefFloatHistogramSample) []byte {
	var enc Encoder
	if Type(rec[0]) == FloatHistogramSamplesV2 {
		return enc.FloatHistogramSamplesV2(s, nil)
	}
	return enc.CustomBucketsFloatHistogramSamples(s, nil)
}

func histogramSeeds(f *testing.F, float bool) {
	var enc Encoder
	in := testHistogramSamples()
	if float {
		fin := toFloatSamples(in)
		rec, custom := enc.FloatHistogramSamples(fin, nil)
		f.Add(rec)
		f.Add(enc.CustomBucketsFloatHistogramSamples(custom, nil))
		f.Add(enc.FloatHistogramSamplesV2(fin, nil))
		f.Add(enc.FloatHistogramSamplesV2(fin[:1], nil))
		f.Add([]byte{byte(FloatHistogramSamples)})
		return
	}
	rec, custom := enc.HistogramSamples(in, nil)
	f.Add(rec)
	f.Add(enc.CustomBucketsHistogramSamples(custom, nil))
	f.Add(enc.HistogramSamplesV2(in, nil))
	f.Add(enc.HistogramSamplesV2(in[:1], nil))
	f.Add([]byte{byte(HistogramSamples)})
}

// FuzzHistogramRecordDecode feeds arbitrary bytes to
// Decoder.HistogramSamples. It must never panic; whatever decodes must
// re-encode to a record that decodes to the same samples, and encoding
// those again must give the same bytes.
func FuzzHistogramRecordDecode(f *testing.F) {
	histogramSeeds(f, false)
	f.Fuzz(func(t *testing.T, rec []byte) {
		var dec Decoder
		s, err := dec.HistogramSamples(rec, nil)
		if err != nil {
			return
		}
		b1 := reencodeHistograms(rec, s)
		again, err := dec.HistogramSamples(b1, nil)
		require.NoError(t, err, "re-decode")
		requireSameHistSamples(t, s, again, true)
		b2 := reencodeHistograms(rec, again)
		require.True(t, bytes.Equal(b1, b2), "re-encoding not stable:\n%x\n%x", b1, b2)
	})
}

// FuzzFloatHistogramRecordDecode is FuzzHistogramRecordDecode for
// Decoder.FloatHistogramSamples.
func FuzzFloatHistogramRecordDecode(f *testing.F) {
	histogramSeeds(f, true)
	f.Fuzz(func(t *testing.T, rec []byte) {
		var dec Decoder
		s, err := dec.FloatHistogramSamples(rec, nil)
		if err != nil {
			return
		}
		b1 := reencodeFloatHistograms(rec, s)
		again, err := dec.FloatHistogramSamples(b1, nil)
		require.NoError(t, err, "re-decode")
		requireSameFloatHistSamples(t, s, again, true)
		b2 := reencodeFloatHistograms(rec, again)
		require.True(t, bytes.Equal(b1, b2), "re-encoding not stable:\n%x\n%x", b1, b2)
	})
}
