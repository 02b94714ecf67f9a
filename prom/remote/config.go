package remote

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/prometheus/common/model"
	plabels "github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/relabel"
)

// Config configures a Sender. Zero fields take the defaults of
// DefaultConfig, except the booleans (Metadata.Send is on in
// DefaultConfig, off in a Config made otherwise); URL is required.
type Config struct {
	// Name identifies the sender; it names the position file
	// (DIR/remote/<Name>.position) and labels the metrics ("remote_name").
	// Default "default".
	Name string
	// URL is the receiver's remote-write endpoint.
	URL *url.URL
	// Timeout bounds each HTTP request. Default 30 s.
	Timeout time.Duration
	// Headers are added to every request.
	Headers map[string]string
	// Client sends the requests; nil uses a new http.Client.
	Client *http.Client
	// ProtobufMessage is the message sent, as Prometheus's
	// protobuf_message: WriteV1 (remote write 1.0, the default) or
	// WriteV2 (remote write 2.0, with start times and inline metadata).
	// A receiver that does not accept the message answers 415, which is
	// not retried: the batch is counted failed and logged.
	ProtobufMessage ProtobufMessage
	// SendExemplars sends the exemplars logged in the WAL with the samples
	// of their commit, as Prometheus's send_exemplars (off by default, as
	// there).
	SendExemplars bool
	// Metadata configures the metadata sent with remote write 1.0 (2.0
	// carries it inline, and ignores this), as Prometheus's
	// metadata_config.
	Metadata MetadataConfig

	// ExternalLabels are added to every series (a series' own label of the
	// same name wins, as in Prometheus).
	ExternalLabels plabels.Labels
	// RelabelConfigs are applied to each series when its Series record is
	// read, after the external labels are added; samples of dropped series
	// are not sent.
	RelabelConfigs []*relabel.Config

	// MinShards and MaxShards bound the number of concurrent senders
	// (shards.go says how the number is chosen). Defaults 1 and 50.
	MinShards, MaxShards int
	// Capacity is how many samples each shard queues before the WAL reader
	// waits. Default 10000.
	Capacity int
	// MaxSamplesPerSend is the batch size. Default 2000.
	MaxSamplesPerSend int
	// BatchSendDeadline is how long a partial batch waits before it is
	// sent. Default 5 s.
	BatchSendDeadline time.Duration
	// MinBackoff and MaxBackoff bound the delay between retries, which
	// doubles from MinBackoff. Defaults 30 ms and 5 s.
	MinBackoff, MaxBackoff time.Duration
	// ReshardInterval is how often the number of shards is reconsidered.
	// Default 10 s.
	ReshardInterval time.Duration

	// PollInterval is how often the end of the WAL is checked for new
	// records (Notify wakes the reader earlier). Default 100 ms.
	PollInterval time.Duration
	// PositionFlushInterval is the least time between two writes of the
	// position file. Default 10 s.
	PositionFlushInterval time.Duration
	// MaxSegmentsBehind caps the backlog: when the acknowledged position is
	// more than this many segments behind the newest one, KeepWALFrom gives
	// up the oldest segments and the reader skips them. 0: no cap.
	MaxSegmentsBehind int
	// FlushDeadline bounds how long Stop waits for queued samples to be
	// sent. Default 1 min.
	FlushDeadline time.Duration
}

// MetadataConfig configures the metadata sent with remote write 1.0:
// every SendInterval, the newest metadata (type, help, unit) of each metric
// family of the series sent, from the WAL's Metadata records, in requests
// of their own holding at most MaxSamplesPerSend entries (metadata.go).
type MetadataConfig struct {
	// Send turns the sending on. DefaultConfig sets it, as Prometheus's
	// default; a Config not made from DefaultConfig has it off.
	Send bool
	// SendInterval is the time between two sends of the metadata. Default
	// 1 min.
	SendInterval time.Duration
	// MaxSamplesPerSend is the most metadata entries in one request.
	// Default 500.
	MaxSamplesPerSend int
}

// ProtobufMessage names a remote-write protobuf message, as Prometheus's
// protobuf_message setting spells it.
type ProtobufMessage string

// The messages a Sender can send.
const (
	// WriteV1 is remote write 1.0's prometheus.WriteRequest. Metadata
	// goes in requests of its own, periodically (Config.Metadata).
	WriteV1 ProtobufMessage = "prometheus.WriteRequest"
	// WriteV2 is remote write 2.0's io.prometheus.write.v2.Request: each
	// series' labels as references into a symbols table, samples and
	// histograms with their start times, exemplars, and the series'
	// newest metadata (from the WAL's Metadata records) inline.
	WriteV2 ProtobufMessage = "io.prometheus.write.v2.Request"
)

// DefaultConfig returns the defaults, with URL unset.
func DefaultConfig() Config {
	return Config{
		Name:                  "default",
		ProtobufMessage:       WriteV1,
		Metadata:              MetadataConfig{Send: true, SendInterval: time.Minute, MaxSamplesPerSend: 500},
		Timeout:               30 * time.Second,
		MinShards:             1,
		MaxShards:             50,
		Capacity:              10000,
		MaxSamplesPerSend:     2000,
		BatchSendDeadline:     5 * time.Second,
		MinBackoff:            30 * time.Millisecond,
		MaxBackoff:            5 * time.Second,
		ReshardInterval:       10 * time.Second,
		PollInterval:          100 * time.Millisecond,
		PositionFlushInterval: 10 * time.Second,
		FlushDeadline:         time.Minute,
	}
}

var validName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// withDefaults returns c with zero fields set to their defaults, or an
// error wrapping ErrConfig.
func (c Config) withDefaults() (Config, error) {
	d := DefaultConfig()
	if c.Name == "" {
		c.Name = d.Name
	}
	setDur := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	setInt := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	if c.ProtobufMessage == "" {
		c.ProtobufMessage = d.ProtobufMessage
	}
	setDur(&c.Timeout, d.Timeout)
	setInt(&c.MinShards, d.MinShards)
	setInt(&c.MaxShards, d.MaxShards)
	setInt(&c.Capacity, d.Capacity)
	setInt(&c.MaxSamplesPerSend, d.MaxSamplesPerSend)
	setDur(&c.BatchSendDeadline, d.BatchSendDeadline)
	setDur(&c.MinBackoff, d.MinBackoff)
	setDur(&c.MaxBackoff, d.MaxBackoff)
	setDur(&c.ReshardInterval, d.ReshardInterval)
	setDur(&c.PollInterval, d.PollInterval)
	setDur(&c.PositionFlushInterval, d.PositionFlushInterval)
	setDur(&c.FlushDeadline, d.FlushDeadline)
	setDur(&c.Metadata.SendInterval, d.Metadata.SendInterval)
	setInt(&c.Metadata.MaxSamplesPerSend, d.Metadata.MaxSamplesPerSend)
	switch {
	case c.URL == nil:
		return c, fmt.Errorf("%w: URL is required", ErrConfig)
	case !validName.MatchString(c.Name):
		return c, fmt.Errorf("%w: name %q: use letters, digits, '_', '.', '-'", ErrConfig, c.Name)
	case c.MinShards > c.MaxShards:
		return c, fmt.Errorf("%w: MinShards %d > MaxShards %d", ErrConfig, c.MinShards, c.MaxShards)
	case c.MinBackoff > c.MaxBackoff:
		return c, fmt.Errorf("%w: MinBackoff %v > MaxBackoff %v", ErrConfig, c.MinBackoff, c.MaxBackoff)
	case c.ProtobufMessage != WriteV1 && c.ProtobufMessage != WriteV2:
		return c, fmt.Errorf("%w: protobuf message %q: use %q or %q", ErrConfig, c.ProtobufMessage, WriteV1, WriteV2)
	case c.MaxSegmentsBehind < 0:
		return c, fmt.Errorf("%w: MaxSegmentsBehind %d < 0", ErrConfig, c.MaxSegmentsBehind)
	}
	for i, rc := range c.RelabelConfigs {
		if rc == nil {
			return c, fmt.Errorf("%w: relabel config %d is nil", ErrConfig, i)
		}
		if err := rc.Validate(model.UTF8Validation); err != nil {
			return c, fmt.Errorf("%w: relabel config %d: %w", ErrConfig, i, err)
		}
	}
	if c.Client == nil {
		c.Client = &http.Client{}
	}
	return c, nil
}
