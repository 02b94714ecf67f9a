package labels_test

import (
	"fmt"

	"github.com/isotsdb/tsdb/labels"
)

func ExampleNewMatcher() {
	m, err := labels.NewMatcher(labels.MatchRegexp, "job", "api|db")
	if err != nil {
		panic(err)
	}
	fmt.Println(m, m.Matches("db"), m.Matches("dbx"), m.SetMatches())
	// Output: job=~"api|db" true false [api db]
}

func ExampleBuilder() {
	ls := labels.FromStrings(labels.MetricName, "up", "job", "api", "instance", "h:1")
	fmt.Println(labels.NewBuilder(ls).Set("job", "db").Del("instance").Labels())
	// Output: {__name__="up", job="db"}
}
