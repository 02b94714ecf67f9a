package remote

// KeepWALFrom returns the first WAL segment the sender still needs: the
// segment of the acknowledged position. Pass it as tsdb.Options.KeepWALFrom
// so that checkpoints leave those segments in place.
//
// If Config.MaxSegmentsBehind is set and that segment is more than that
// many segments behind the newest one the reader has seen, the sender
// gives up the oldest data instead of holding the WAL: it returns newest -
// MaxSegmentsBehind, and the reader skips to that segment, counting the
// segments and samples it gives up (wal_segments_dropped_total,
// samples_skipped_total). The samples are those the reader still finds:
// the checkpoint that asked removes the given-up segments at once, and a
// segment gone before the reader got to it counts as dropped with none.
//
// It takes no lock and makes no DB call; safe for concurrent use.
func (s *Sender) KeepWALFrom() int {
	keep := max(int(s.tracker.ackedSeg.Load()), int(s.skipTo.Load()))
	if c := s.cfg.MaxSegmentsBehind; c > 0 {
		if floor := int(s.newestSeg.Load()) - c; floor > keep {
			keep = floor
			for {
				cur := s.skipTo.Load()
				if int64(floor) <= cur || s.skipTo.CompareAndSwap(cur, int64(floor)) {
					break
				}
			}
			signal(s.skipCh)
			s.Notify()
		}
	}
	return keep
}
