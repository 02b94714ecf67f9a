package scrape

import (
	"context"

	"github.com/isotsdb/tsdb"
)

// WrapAppender makes s use wrap(a) for every transaction a it opens.
func WrapAppender(s *Scraper, wrap func(tsdb.Appender) tsdb.Appender) {
	next := s.newAppender
	s.newAppender = func(ctx context.Context) tsdb.Appender { return wrap(next(ctx)) }
}
