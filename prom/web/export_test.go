package promweb

// The test helpers that promtool_test.go uses. That test is in package
// promweb_test because it serves isotsdb through prom/serve, which imports
// this package; these names give it the helpers of package promweb's tests.
var (
	ConformanceData = conformanceData
	ConfSeconds     = confSeconds
	OpenProm        = openProm
	PromHandler     = promHandler
	AppendAll       = appendAll
	IsoStorage      = isoStorage
	Serve           = serve
)
