package shiptest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Bucket is the bucket StartWeed creates.
const Bucket = "blocks"

// Weed is a SeaweedFS server (master, volume, filer and S3 gateway in one
// process) on loopback ports. Its data directory outlives Kill, so Start
// brings the same bucket back.
type Weed struct {
	t     testing.TB
	bin   string
	dir   string
	ports []int // master, volume, filer, s3, then their gRPC ports
	cmd   *exec.Cmd
	log   *os.File
}

// Binary returns the SeaweedFS binary named by TSDB_WEED. Without it the
// test fails, unless TSDB_NO_S3=1 says to skip it.
func Binary(t testing.TB) string {
	t.Helper()
	if os.Getenv("TSDB_NO_S3") == "1" {
		t.Skip("TSDB_NO_S3=1: S3 end-to-end tests skipped")
	}
	bin := os.Getenv("TSDB_WEED")
	if bin == "" {
		t.Fatal("TSDB_WEED is not set: build SeaweedFS with scripts/seaweedfs and run " +
			"`TSDB_WEED=$(../scripts/seaweedfs) go test ./...` in the module (or set TSDB_NO_S3=1 to skip the S3 tests)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("TSDB_WEED=%s: %v (run scripts/seaweedfs)", bin, err)
	}
	return bin
}

// StartWeed starts a server with the bucket Bucket, written to once so
// that it is ready for uploads, and kills it at the end of the test
// (logging the tail of its log if the test failed).
func StartWeed(t testing.TB) *Weed {
	t.Helper()
	w := &Weed{t: t, bin: Binary(t), dir: t.TempDir(), ports: freePorts(t, 8)}
	log, err := os.Create(filepath.Join(t.TempDir(), "weed.log"))
	require.NoError(t, err)
	w.log = log
	t.Cleanup(func() {
		w.Kill()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("weed log tail:\n%s", b)
		}
	})
	w.Start()
	w.CreateBucket(Bucket)
	w.WarmUp(Bucket)
	return w
}

// freePorts returns n distinct ports free on loopback right now.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// S3Port is the port of the server's S3 gateway on 127.0.0.1.
func (w *Weed) S3Port() int { return w.ports[3] }

// Start runs the server (again, after Kill: same directory and ports) and
// waits until its S3 gateway answers.
func (w *Weed) Start() {
	t := w.t
	t.Helper()
	p := func(i int) string { return strconv.Itoa(w.ports[i]) }
	w.cmd = exec.Command(w.bin, "server",
		"-dir="+w.dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port="+p(0), "-master.port.grpc="+p(4),
		"-volume.port="+p(1), "-volume.port.grpc="+p(5),
		"-filer.port="+p(2), "-filer.port.grpc="+p(6),
		"-s3", "-s3.port="+p(3), "-s3.port.grpc="+p(7),
		"-master.volumeSizeLimitMB=256", "-volume.max=16",
	)
	w.cmd.Stdout, w.cmd.Stderr = w.log, w.log
	require.NoError(t, w.cmd.Start())
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", w.S3Port()))
		if err == nil {
			resp.Body.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("SeaweedFS S3 gateway not up after 30s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it.
func (w *Weed) Kill() {
	if w.cmd == nil || w.cmd.Process == nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGKILL) // may have exited already
	_ = w.cmd.Wait()                          // killed: the error says so
	w.cmd = nil
}

// CreateBucket creates a bucket with an anonymous S3 PUT, retrying while
// the filer behind the gateway comes up.
func (w *Weed) CreateBucket(name string) {
	t := w.t
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/%s", w.S3Port(), name)
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodPut, url, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusConflict {
				return
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("create bucket %s: %v", name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// WarmUp writes and deletes an object in bucket, retrying until the write
// succeeds. The first write to a new (or restarted) server waits while it
// allocates volumes, about 8 s here; doing it before a test keeps that out
// of the upload times the tests measure and out of their retry budgets.
func (w *Weed) WarmUp(bucket string) {
	t := w.t
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/%s/.warmup", w.S3Port(), bucket)
	deadline := time.Now().Add(60 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodPut, url, strings.NewReader("warm"))
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if time.Now().After(deadline) {
			t.Fatalf("warm up bucket %s: %v", bucket, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	req, err := http.NewRequest(http.MethodDelete, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNoContent, resp.StatusCode, "delete %s", url)
}

// Config is the objstore YAML of the server's bucket (anonymous access:
// any key is accepted).
func (w *Weed) Config(bucket string) []byte {
	return fmt.Appendf(nil, `type: S3
config:
  bucket: %s
  endpoint: 127.0.0.1:%d
  insecure: true
  access_key: any
  secret_key: any
  max_retries: 1
`, bucket, w.S3Port())
}
