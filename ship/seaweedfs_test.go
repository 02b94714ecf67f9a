package ship

import (
	"context"
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
	"github.com/thanos-io/objstore"
)

// weedServer is a SeaweedFS server (master, volume, filer and S3 gateway
// in one process) on loopback ports, for the end-to-end tests.
type weedServer struct {
	t     testing.TB
	bin   string
	dir   string
	ports []int // master, volume, filer, s3, then their gRPC ports
	cmd   *exec.Cmd
	log   *os.File
}

// weedBinary returns the SeaweedFS binary named by TSDB_WEED. Without it
// the test fails (so that CI never skips the S3 tests unnoticed), unless
// TSDB_NO_S3=1 says to skip them.
func weedBinary(t testing.TB) string {
	t.Helper()
	if os.Getenv("TSDB_NO_S3") == "1" {
		t.Skip("TSDB_NO_S3=1: S3 end-to-end tests skipped")
	}
	bin := os.Getenv("TSDB_WEED")
	if bin == "" {
		t.Fatal("TSDB_WEED is not set: build SeaweedFS with scripts/seaweedfs and run " +
			"`TSDB_WEED=$(../scripts/seaweedfs) go test ./...` in ship/ (or set TSDB_NO_S3=1 to skip the S3 tests)")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("TSDB_WEED=%s: %v (run scripts/seaweedfs)", bin, err)
	}
	return bin
}

// startWeed starts a server with a bucket "blocks" and stops it at the
// end of the test.
func startWeed(t testing.TB) *weedServer {
	t.Helper()
	w := &weedServer{t: t, bin: weedBinary(t), dir: t.TempDir(), ports: freePorts(t, 8)}
	log, err := os.Create(filepath.Join(t.TempDir(), "weed.log"))
	require.NoError(t, err)
	w.log = log
	t.Cleanup(func() {
		w.kill()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			if len(b) > 8000 {
				b = b[len(b)-8000:]
			}
			t.Logf("weed log tail:\n%s", b)
		}
	})
	w.start()
	w.createBucket("blocks")
	w.warmUp("blocks")
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

func (w *weedServer) s3Port() int { return w.ports[3] }

// start runs the server and waits until its S3 gateway answers.
func (w *weedServer) start() {
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
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/", w.s3Port()))
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

// kill ends the server with SIGKILL, as a crash would, and waits for it.
func (w *weedServer) kill() {
	if w.cmd == nil || w.cmd.Process == nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGKILL) // may have exited already
	_ = w.cmd.Wait()                          // killed: the error says so
	w.cmd = nil
}

// createBucket creates a bucket with an anonymous S3 PUT, retrying while
// the filer behind the gateway comes up.
func (w *weedServer) createBucket(name string) {
	t := w.t
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/%s", w.s3Port(), name)
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

// warmUp writes and deletes an object in bucket, retrying until the write
// succeeds. The first write to a new (or restarted) server waits while it
// allocates volumes, about 8 s here; doing it before a test keeps that out
// of the upload times the tests measure and out of their retry budgets.
func (w *weedServer) warmUp(bucket string) {
	t := w.t
	t.Helper()
	url := fmt.Sprintf("http://127.0.0.1:%d/%s/.warmup", w.s3Port(), bucket)
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

// config is the objstore YAML for the server's bucket.
func (w *weedServer) config(bucket string) []byte {
	return fmt.Appendf(nil, `type: S3
config:
  bucket: %s
  endpoint: 127.0.0.1:%d
  insecure: true
  access_key: any
  secret_key: any
  max_retries: 1
`, bucket, w.s3Port())
}

// bucket opens the server's bucket through objstore's client factory.
func (w *weedServer) bucket(name string) objstore.Bucket {
	w.t.Helper()
	bkt, err := NewBucket(w.config(name), nil)
	require.NoError(w.t, err)
	w.t.Cleanup(func() { bkt.Close() })
	return bkt
}

// waitUp waits until the bucket answers a listing, after a restart.
func waitUp(t testing.TB, bkt objstore.Bucket) {
	t.Helper()
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return bkt.Iter(ctx, "", func(string) error { return nil }) == nil
	}, 30*time.Second, 200*time.Millisecond)
}
