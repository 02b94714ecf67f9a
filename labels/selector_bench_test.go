package labels

import "testing"

func BenchmarkParseSelector(b *testing.B) {
	for _, bc := range []struct{ name, in string }{
		{"name", `http_requests_total`},
		{"equal", `http_requests_total{job="api", instance="host-1:9100", code!="200"}`},
		{"regex", `{__name__=~"http_.*", "service.name"=~"api|web", path!~"/health.*"}`},
		{"escapes", `{a="\x41\u00e9 \"quoted\" \\ more text", b='single\'s'}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(bc.in)))
			for b.Loop() {
				if _, err := ParseSelector(bc.in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
