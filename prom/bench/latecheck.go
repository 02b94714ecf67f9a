package main

import (
	"fmt"
	"math"
)

// The read-back check of the late variants (phases_blocks_late.go): a
// digest of a set of float samples, their number and the wrapping sum of
// a hash of each (series, timestamp, value). It does not depend on the
// order the samples come in, so the digest of what a store reads back can
// be compared with that of the workload, computed from the corpus:
// every series holds exactly its samples, with their timestamps and
// values, and no sample is lost or repeated. Two stores that both match
// the workload return the same samples.

// digest is a set of float samples, summarised.
type digest struct {
	samples int
	sum     uint64 // Σ sampleHash, wrapping
}

// sampleHash hashes series i's sample (t, v).
func sampleHash(i int, t int64, v float64) uint64 {
	return mix(mix(uint64(i), uint64(t)), math.Float64bits(v))
}

// add adds a sample to d.
func (d *digest) add(i int, t int64, v float64) {
	d.samples++
	d.sum += sampleHash(i, t, v)
}

// minus returns d without the samples of e (a subset of d's).
func (d digest) minus(e digest) digest {
	return digest{samples: d.samples - e.samples, sum: d.sum - e.sum}
}

// workloadDigest returns the digest of rounds [0, rounds) of corpus c:
// every series' sample of every round, at its target's scrape time.
func workloadDigest(c *corpus, rounds int) digest {
	var d digest
	for i := range c.series {
		k := i / targetSize
		for r := range rounds {
			d.add(i, scrapeTime(k, r), c.value(i, r))
		}
	}
	return d
}

// readDigest reads every float sample of s over [mint, maxt] and returns
// their digest.
func readDigest(s store, mint, maxt int64) (digest, error) {
	var d digest
	err := s.scan(lateCheckQuery, mint, maxt, d.add)
	return d, err
}

// checkDigest compares got, read back from store cfg, with want and
// says how they differ.
func checkDigest(cfg config, what string, got, want digest) error {
	switch {
	case got.samples != want.samples:
		return fmt.Errorf("bench: %s: %s read back %d samples, want %d", what, cfg, got.samples, want.samples)
	case got.sum != want.sum:
		return fmt.Errorf("bench: %s: %s read back the %d samples written, but not their timestamps, values or series (digest %x, want %x)", what, cfg, got.samples, got.sum, want.sum)
	}
	return nil
}
