package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	remoteapi "github.com/prometheus/client_golang/exp/api/remote"
	promremote "github.com/prometheus/prometheus/storage/remote"
	ptsdb "github.com/prometheus/prometheus/tsdb"
	"github.com/stretchr/testify/require"
)

// The environment that turns the test binary into a child receiver (see
// TestMain and childMain).
const (
	// childDirEnv is the Prometheus TSDB's directory; set, the binary
	// runs childMain instead of the tests.
	childDirEnv = "ISOTSDB_REMOTE_TEST_RECEIVER_DIR"
	// childAddrEnv is the address to listen on (host:0 picks a port).
	childAddrEnv = "ISOTSDB_REMOTE_TEST_RECEIVER_ADDR"
	// childHangEnv, if a positive number n, makes the child apply the
	// write request after the first n and then never answer it.
	childHangEnv = "ISOTSDB_REMOTE_TEST_RECEIVER_HANG_AFTER"
)

// What the child prints on stdout, one line each.
const (
	childReady = "ready"  // "ready ADDR": the TSDB is open and ADDR accepts connections
	childHung  = "hung"   // "hung CODE": a request was applied (CODE is the handler's answer) and will not be answered
	childDone  = "closed" // "closed": stdin ended, the server and the TSDB are closed
)

// childMain is a remote-write receiver for the tests to kill: Prometheus's
// own write handler over a Prometheus TSDB in dir, listening on addr, plus
// GET /samples, which lists the TSDB's samples one a line as
// promSampleKeys writes them. It runs until killed, or until stdin ends,
// when it closes the server and the TSDB. It returns the exit code.
func childMain(dir, addr string, hangAfter int64) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	fail := func(err error) int {
		logger.Error("child receiver", "err", err)
		return 1
	}
	db, err := ptsdb.Open(dir, logger, nil, ptsdb.DefaultOptions(), nil)
	if err != nil {
		return fail(fmt.Errorf("open %s: %w", dir, err))
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		db.Close()
		return fail(fmt.Errorf("listen: %w", err))
	}
	write := promremote.NewWriteHandler(logger, nil, db, remoteapi.MessageTypes{remoteapi.WriteV1MessageType}, false, false)
	var requests atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/write", func(w http.ResponseWriter, r *http.Request) {
		if hangAfter <= 0 || requests.Add(1) != hangAfter+1 {
			write.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		write.ServeHTTP(rec, r)
		fmt.Printf("%s %d\n", childHung, rec.Code)
		select {} // never answer; the test kills the process
	})
	mux.HandleFunc("/samples", func(w http.ResponseWriter, _ *http.Request) {
		keys, err := promSampleKeys(db)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for k := range keys {
			fmt.Fprintln(w, k)
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: time.Minute}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("%s %s\n", childReady, ln.Addr())

	_, _ = io.Copy(io.Discard, os.Stdin)
	srv.Close()
	if err := db.Close(); err != nil {
		return fail(fmt.Errorf("close %s: %w", dir, err))
	}
	fmt.Println(childDone)
	return 0
}

// childFromEnv runs childMain if the environment asks for it (ok true),
// with its exit code.
func childFromEnv() (code int, ok bool) {
	dir := os.Getenv(childDirEnv)
	if dir == "" {
		return 0, false
	}
	var hang int64
	if s := os.Getenv(childHangEnv); s != "" {
		var err error
		if hang, err = strconv.ParseInt(s, 10, 64); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", childHangEnv, err)
			return 2, true
		}
	}
	return childMain(dir, os.Getenv(childAddrEnv), hang), true
}

// promSampleKeys returns every sample of db, keyed as ingest keys them,
// with how many times the TSDB holds it (1, a TSDB holding no
// duplicates).
func promSampleKeys(db *ptsdb.DB) (map[string]int, error) {
	q, err := db.Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		return nil, fmt.Errorf("querier: %w", err)
	}
	defer q.Close()
	out := map[string]int{}
	ss := q.Select(context.Background(), false, nil, promMatcher())
	for ss.Next() {
		s := ss.At()
		it := s.Iterator(nil)
		for it.Next() != 0 {
			ts, v := it.At()
			out[fmt.Sprintf("%s@%d=%g", s.Labels(), ts, v)]++
		}
		if err := it.Err(); err != nil {
			return nil, fmt.Errorf("iterate %s: %w", s.Labels(), err)
		}
	}
	if err := ss.Err(); err != nil {
		return nil, fmt.Errorf("select: %w", err)
	}
	return out, nil
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex // protects buf
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// childReceiver is a running child receiver process: the test binary
// re-executed in the mode of childMain.
type childReceiver struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string // the child's stdout, a line each; closed at its end
	stderr *lockedBuffer
	addr   string // where it listens
	exited bool   // cmd.Wait returned
}

// startChild starts a child receiver on dir and addr that hangs the
// request after the first hangAfter (0: none), and waits until it is
// ready. It is killed at the end of the test if still running; its stderr
// is logged if the test failed.
func startChild(t *testing.T, dir, addr string, hangAfter int) *childReceiver {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childAddrEnv+"="+addr, fmt.Sprint(childHangEnv, "=", hangAfter))
	c := &childReceiver{cmd: cmd, lines: make(chan string, 16), stderr: &lockedBuffer{}}
	cmd.Stderr = c.stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	c.stdin, err = cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		if !c.exited {
			_ = cmd.Process.Kill()
			c.wait()
		}
		if t.Failed() {
			t.Logf("child receiver (pid %d) stderr:\n%s", cmd.Process.Pid, c.stderr)
		}
	})
	ready := c.waitLine(t, childReady)
	c.addr = strings.TrimPrefix(ready, childReady+" ")
	return c
}

// childTimeout bounds each wait for the child: generous, for a race
// build on a loaded machine.
const childTimeout = 2 * time.Minute

// waitLine waits for the child's next stdout line, which must start with
// prefix, and returns it.
func (c *childReceiver) waitLine(t *testing.T, prefix string) string {
	t.Helper()
	select {
	case l, ok := <-c.lines:
		require.True(t, ok, "child receiver exited before printing %q; stderr:\n%s", prefix, c.stderr)
		require.True(t, strings.HasPrefix(l, prefix), "child receiver printed %q, want %q", l, prefix)
		return l
	case <-time.After(childTimeout):
		t.Fatalf("child receiver printed no %q in %v", prefix, childTimeout)
		return ""
	}
}

// wait drains the child's stdout and waits for it to exit.
func (c *childReceiver) wait() error {
	for range c.lines {
	}
	c.exited = true
	return c.cmd.Wait()
}

// kill sends the child SIGKILL and checks that it died of it.
func (c *childReceiver) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Signal(syscall.SIGKILL))
	err := c.wait()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "child receiver's end: %v", err)
	ws, ok := exit.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGKILL, "child receiver's end: %v", err)
}

// stop ends the child's stdin and waits for it to close its TSDB and
// exit cleanly.
func (c *childReceiver) stop(t *testing.T) {
	t.Helper()
	require.NoError(t, c.stdin.Close())
	c.waitLine(t, childDone)
	require.NoError(t, c.wait(), "child receiver's stderr:\n%s", c.stderr)
}

// samples is the child's GET /samples.
func (c *childReceiver) samples(t *testing.T) map[string]int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "http://"+c.addr+"/samples", nil)
	require.NoError(t, err)
	req.Close = true // no idle connection to a child that will be killed
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
	out := map[string]int{}
	for l := range strings.Lines(string(b)) {
		out[strings.TrimSuffix(l, "\n")]++
	}
	return out
}
