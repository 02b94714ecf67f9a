package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// The blocks6h and restart phases. blocks6h: the float scrape over
// p.blocksRounds rounds (1,440: 6 h of data) on a store with 2 h blocks,
// cutting blocks as it goes (see ingestCutting), then the read phase's
// queries over the whole range and over the newest hour, the heap per
// series, the blocks' bytes per sample. restart, after it: a copy of the
// data directory taken while the store is open (what kill -9 leaves: both
// stores write each commit's WAL records to the file before Commit
// returns, Prometheus its last page included, so the copy holds every
// commit), then Close, Open of the same directory (a clean restart) and
// Open of the copy (a crash); each Open is timed alone and followed by a
// count of the samples over the whole range.

// realBlockRange is the block range of the blocks6h phase: a Prometheus
// server's default, 2 h (ms).
const realBlockRange = int64(2 * 3600 * 1000)

// newestHour is the range of the "newest hour" reads, ms.
const newestHour = int64(3600 * 1000)

// countQuery selects every float series, for the sample counts after a
// restart.
var countQuery = &query{name: "everything (count)", matchers: []matcher{{name: "job", value: "bench"}}}

// blocksRun is what runBlocks leaves for the PromQL phase.
type blocksRun struct {
	dir        string // the data directory, kept if runBlocks was asked to
	mint, maxt int64  // the range written
}

// runBlocks runs the blocks6h phase on a fresh store of configuration
// cfg and, if restart, the restart phase after it; with late (not nil),
// their late variants, blocks6h-late and restart-late (see
// phases_blocks_late.go). If keep, the data directory is left in place
// (closed) for the PromQL phase and returned; the caller removes it.
func runBlocks(cfg config, c *corpus, qs []*query, p params, restart, keep bool, late *lateRun, log func(string)) (figures, blocksRun, error) {
	f := figures{}
	phase, b6, rs := "blocks6h", "b6.", "restart."
	var ls *lateSchedule
	if late != nil {
		phase, b6, rs, ls = "blocks6h-late", "b6late.", "restartlate.", late.ls
	}
	dir, err := os.MkdirTemp(p.tmp, "blocks-"+cfg.kind.String()+"-")
	if err != nil {
		return nil, blocksRun{}, err
	}
	kept := false
	defer func() {
		if !kept {
			os.RemoveAll(dir)
		}
	}()
	scfg := storeConfig{dir: dir, isolation: cfg.isolation, series: c.series, blockRange: realBlockRange}
	// The restart phases close and reopen this store: isotsdb writes its
	// chunk snapshot at that Close and restores from it (Prometheus's
	// store keeps its defaults: memory snapshot off).
	scfg.snapshotOnShutdown = restart
	if late != nil {
		scfg.lateWindow = lateWindow
	}
	base := liveHeap()
	s, err := openStore(cfg.kind, scfg)
	if err != nil {
		return nil, blocksRun{}, err
	}
	defer func() { s.close() }()
	refs := make([]uint64, len(c.series))

	cs, err := ingestCutting(s, c, refs, p.blocksRounds, realBlockRange, ls, nil)
	if err != nil {
		return nil, blocksRun{}, fmt.Errorf("bench: %s: %w", phase, err)
	}
	n := cs.samples
	written := n // samples the store holds
	if late != nil {
		if n != late.want.samples {
			return nil, blocksRun{}, fmt.Errorf("bench: %s appended %d samples, the schedule has %d", phase, n, late.want.samples)
		}
		written = lateFigures(f, b6, cfg, phase, late, cs, log)
	}
	f[b6+"cpu"] = float64(cs.ingest.cpu.Nanoseconds()) / float64(n)
	f[b6+"rate"] = float64(n) / cs.ingest.wall.Seconds()
	f[b6+"compact.cpu"] = cs.compact.cpu.Seconds()
	f[b6+"compactions"] = float64(cs.compactions)
	if cs.compactions > 0 {
		f[b6+"compact.peak"] = float64(cs.peakOver)
		f[b6+"compact.peakabs"] = float64(cs.peakAbs) - float64(base)
	}
	f[b6+"heap"] = (float64(liveHeap()) - float64(base)) / float64(len(c.series))
	bytes, samples, err := diskPerSample(s)
	if err != nil {
		return nil, blocksRun{}, err
	}
	if samples > 0 {
		f[b6+"disk.bytes"] = float64(bytes) / float64(samples)
	}
	f[b6+"disk.samples"] = float64(samples)
	all, err := dirBytes(dir)
	if err != nil {
		return nil, blocksRun{}, err
	}
	f[b6+"dir.bytes"] = float64(all) / float64(n)

	mint, maxt := baseTime, maxTime(p.blocksRounds, c.targets())
	st, err := readPhase(s, qs, p.blocksReadReps, mint, maxt)
	if err != nil {
		return nil, blocksRun{}, fmt.Errorf("bench: %s: whole range: %w", phase, err)
	}
	f[b6+"read.all"] = float64(st.samples) / st.wall.Seconds()
	f[b6+"read.all.samples"] = float64(st.samples)
	st, err = readPhase(s, qs, p.blocksReadReps, maxt-newestHour+1, maxt)
	if err != nil {
		return nil, blocksRun{}, fmt.Errorf("bench: %s: newest hour: %w", phase, err)
	}
	f[b6+"read.hour"] = float64(st.samples) / st.wall.Seconds()
	f[b6+"read.hour.samples"] = float64(st.samples)

	var want *digest
	if late != nil {
		d := late.want.minus(cs.late.lost)
		want = &d
		got, err := readDigest(s, mint, maxt)
		if err != nil {
			return nil, blocksRun{}, fmt.Errorf("bench: %s: read back: %w", phase, err)
		}
		if err := checkDigest(cfg, phase, got, d); err != nil {
			return nil, blocksRun{}, err
		}
	}
	if restart {
		if err := restartPhase(f, rs, cfg, c, p, s, scfg, written, want, mint, maxt); err != nil {
			return nil, blocksRun{}, err
		}
	}
	if err := s.close(); err != nil {
		return nil, blocksRun{}, err
	}
	if !keep {
		return f, blocksRun{}, nil
	}
	kept = true
	return f, blocksRun{dir: dir, mint: mint, maxt: maxt}, nil
}

// restartPhase runs the restart phase on s, the open store of the
// blocks6h phase (configuration scfg, written samples n over [mint,
// maxt]), and adds its figures to f, their names prefixed with fig
// ("restart." or "restartlate."). With want (the late variant), what
// each Open reads back is checked against it sample by sample (see
// latecheck.go) rather than counted: a clean restart must read back
// exactly want, and after a crash any sample not lost must be as written.
// s is closed when it returns.
func restartPhase(f figures, fig string, cfg config, c *corpus, p params, s store, scfg storeConfig, written int, want *digest, mint, maxt int64) error {
	crash, err := os.MkdirTemp(p.tmp, "crash-"+cfg.kind.String()+"-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(crash)
	if err := copyDir(scfg.dir, crash); err != nil {
		return fmt.Errorf("bench: restart: copy the open store: %w", err)
	}
	m := startMeter()
	err = s.close()
	f[fig+"close.wall"] = m.stop().wall.Seconds()
	if err != nil {
		return fmt.Errorf("bench: restart: close: %w", err)
	}

	open := func(dir, prefix string) (digest, error) {
		sc := scfg
		sc.dir = dir
		sc.measureOpen = true
		s, err := openStore(cfg.kind, sc)
		if err != nil {
			return digest{}, err
		}
		defer s.close()
		o := s.opened()
		f[prefix+"wall"] = o.wall.Seconds()
		f[prefix+"cpu"] = o.cpu.Seconds()
		f[prefix+"heap"] = float64(o.heap) / float64(len(c.series))
		var got digest
		if want != nil {
			got, err = readDigest(s, mint, maxt)
		} else {
			_, got.samples, err = s.query(countQuery, mint, maxt)
		}
		if err != nil {
			return digest{}, fmt.Errorf("bench: restart: count: %w", err)
		}
		return got, s.close()
	}
	got, err := open(scfg.dir, fig+"open.")
	if err != nil {
		return err
	}
	if want != nil {
		if err := checkDigest(cfg, "clean restart", got, *want); err != nil {
			return err
		}
	} else if got.samples != written {
		return fmt.Errorf("bench: restart: %s read %d samples after a clean restart, %d were written", cfg, got.samples, written)
	}
	got, err = open(crash, fig+"crash.")
	if err != nil {
		return fmt.Errorf("bench: restart after a crash: %w", err)
	}
	f[fig+"crash.lost"] = float64(written - got.samples)
	if want != nil && got.samples >= want.samples {
		// Nothing lost: then every sample must be as written.
		if err := checkDigest(cfg, "restart after a crash", got, *want); err != nil {
			return err
		}
	}
	return nil
}

// dirBytes returns the bytes of the files under dir.
func dirBytes(dir string) (uint64, error) {
	var n uint64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n += uint64(fi.Size())
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("bench: size of %s: %w", dir, err)
	}
	return n, nil
}

// copyDir copies the files under src to dst (an existing directory), as
// they are at the moment each is read, skipping a lock file.
func copyDir(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o777)
		}
		if d.Name() == "lock" {
			return nil
		}
		return copyFile(path, to)
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
