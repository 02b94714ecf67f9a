package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// monitor samples the heap during ingestion and drives the progress bar.
type monitor struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  uint64 // written by the monitor goroutine; read after wg.Wait
}

// monitorInterval is how often the heap is sampled: often enough to catch
// the peak between GC cycles of a multi-second run, cheap since reading
// runtime/metrics does not stop the world.
const monitorInterval = 20 * time.Millisecond

func startMonitor(done *atomic.Int64, total int64, stderr io.Writer) *monitor {
	var bar *progressbar.ProgressBar
	if isTerminal(stderr) {
		bar = progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("ingesting"),
			progressbar.OptionSetItsString("samples"),
			progressbar.OptionShowIts(),
			progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
	}
	m := &monitor{stopc: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		tick := time.NewTicker(monitorInterval)
		defer tick.Stop()
		for {
			m.peak = max(m.peak, heapInUse())
			if bar != nil {
				_ = bar.Set64(done.Load()) // a failed write to stderr only loses progress
			}
			select {
			case <-m.stopc:
				if bar != nil {
					_ = bar.Finish()
				}
				return
			case <-tick.C:
			}
		}
	}()
	return m
}

// stop ends the monitor and returns the peak heap in use it saw.
func (m *monitor) stop() uint64 {
	close(m.stopc)
	m.wg.Wait()
	return max(m.peak, heapInUse())
}

// statusLine shows what the benchmark is doing on a terminal, on one line
// that each message replaces; elsewhere it prints nothing.
type statusLine struct {
	w  io.Writer // nil when not a terminal
	on bool      // a message is showing
}

func newStatusLine(w io.Writer) *statusLine {
	if !isTerminal(w) {
		return &statusLine{}
	}
	return &statusLine{w: w}
}

func (s *statusLine) show(msg string) {
	if s.w != nil {
		fmt.Fprintf(s.w, "\r\033[K%s…", msg)
		s.on = true
	}
}

func (s *statusLine) clear() {
	if s.w != nil && s.on {
		fmt.Fprint(s.w, "\r\033[K")
		s.on = false
	}
}

// isTerminal reports whether w is a terminal, where a progress bar helps
// rather than litters a log.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
