package remote_test

import (
	"log"
	"net/url"

	"github.com/isotsdb/tsdb"
	"github.com/isotsdb/tsdb/prom/remote"
)

// A sender over a DB's directory, plugged into Options.KeepWALFrom so that
// checkpoints keep the segments it has not sent yet (at most 50 behind).
func Example() {
	dir := "data"
	u, _ := url.Parse("http://prometheus:9090/api/v1/write")
	cfg := remote.DefaultConfig()
	cfg.URL = u
	cfg.MaxSegmentsBehind = 50
	s, err := remote.New(dir, cfg, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	opts := tsdb.DefaultOptions()
	opts.KeepWALFrom = s.KeepWALFrom
	db, err := tsdb.Open(dir, nil, nil, opts)
	if err != nil {
		log.Fatal(err)
	}
	if err := s.Start(); err != nil {
		log.Fatal(err)
	}
	// ... append to db; s.Notify() after commits sends sooner than polling ...
	if err := s.Stop(); err != nil {
		log.Print(err)
	}
	if err := db.Close(); err != nil {
		log.Print(err)
	}
}
