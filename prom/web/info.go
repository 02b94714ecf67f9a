package promweb

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/prometheus/web/api/v1"
)

// isotsdbModule is the module whose version /api/v1/status/buildinfo
// reports.
const isotsdbModule = "github.com/isotsdb/tsdb"

// buildInfo is /api/v1/status/buildinfo: isotsdb's module version as the
// binary records it (the version of the dependency
// github.com/isotsdb/tsdb, or of a replacement with a version; if the
// binary records no such dependency but its main module is isotsdb or one
// of its nested modules, such as a test binary of this one, the main
// module's version, usually "(devel)"; else "unknown"), the VCS revision
// and time the binary was built from, if recorded, and the Go version.
func buildInfo() *v1.PrometheusVersion {
	v := &v1.PrometheusVersion{Version: "unknown", GoVersion: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if bi.Main.Path == isotsdbModule || strings.HasPrefix(bi.Main.Path, isotsdbModule+"/") {
		v.Version = bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == isotsdbModule {
			v.Version = d.Version
			if d.Replace != nil && d.Replace.Version != "" {
				v.Version = d.Replace.Version
			}
		}
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			v.Revision = s.Value
		case "vcs.time":
			v.BuildDate = s.Value
		}
	}
	return v
}

// runtimeInfo is /api/v1/status/runtimeinfo for a handler built at start.
func runtimeInfo(start time.Time) v1.RuntimeInfo {
	cwd, _ := os.Getwd()
	host, _ := os.Hostname()
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		gogc = "100"
	}
	return v1.RuntimeInfo{
		StartTime:           start,
		CWD:                 cwd,
		Hostname:            host,
		ServerTime:          time.Now().UTC(),
		ReloadConfigSuccess: true,
		LastConfigTime:      start,
		GoroutineCount:      runtime.NumGoroutine(),
		GOMAXPROCS:          runtime.GOMAXPROCS(0),
		GOMEMLIMIT:          debug.SetMemoryLimit(-1),
		GOGC:                gogc,
		GODEBUG:             os.Getenv("GODEBUG"),
	}
}

// flags is /api/v1/status/flags: the options in Prometheus's flag names.
func flags(o Options, writable bool) map[string]string {
	return map[string]string{
		"query.timeout":                    o.QueryTimeout.String(),
		"query.max-samples":                strconv.Itoa(o.MaxSamples),
		"query.lookback-delta":             o.LookbackDelta.String(),
		"web.enable-admin-api":             strconv.FormatBool(writable),
		"web.enable-remote-write-receiver": strconv.FormatBool(writable),
	}
}
