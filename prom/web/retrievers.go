package promweb

import (
	"fmt"
	"net/url"

	"github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/rules"
	"github.com/prometheus/prometheus/scrape"
	v1 "github.com/prometheus/prometheus/web/api/v1"
)

// noScrapes answers the API's scrape questions as a Prometheus without
// scrape configuration: no pools, no targets.
type noScrapes struct{}

var (
	_ v1.ScrapePoolsRetriever = noScrapes{}
	_ v1.TargetRetriever      = noScrapes{}
)

// ScrapePools implements v1.ScrapePoolsRetriever.
func (noScrapes) ScrapePools() []string { return []string{} }

// TargetsActive implements v1.TargetRetriever.
func (noScrapes) TargetsActive() map[string][]*scrape.Target { return map[string][]*scrape.Target{} }

// TargetsDropped implements v1.TargetRetriever.
func (noScrapes) TargetsDropped() map[string][]*scrape.Target { return map[string][]*scrape.Target{} }

// TargetsDroppedCounts implements v1.TargetRetriever.
func (noScrapes) TargetsDroppedCounts() map[string]int { return map[string]int{} }

// ScrapePoolConfig implements v1.TargetRetriever: there is no pool.
func (noScrapes) ScrapePoolConfig(name string) (*config.ScrapeConfig, error) {
	return nil, fmt.Errorf("promweb: no scrape pool %q: isotsdb does not scrape", name)
}

// noAlerting answers the API's rule and Alertmanager questions as a
// Prometheus without rules or Alertmanagers.
type noAlerting struct{}

var (
	_ v1.AlertmanagerRetriever = noAlerting{}
	_ v1.RulesRetriever        = noAlerting{}
)

// Alertmanagers implements v1.AlertmanagerRetriever.
func (noAlerting) Alertmanagers() []*url.URL { return []*url.URL{} }

// DroppedAlertmanagers implements v1.AlertmanagerRetriever.
func (noAlerting) DroppedAlertmanagers() []*url.URL { return []*url.URL{} }

// RuleGroups implements v1.RulesRetriever.
func (noAlerting) RuleGroups() []*rules.Group { return []*rules.Group{} }

// AlertingRules implements v1.RulesRetriever.
func (noAlerting) AlertingRules() []*rules.AlertingRule { return []*rules.AlertingRule{} }
