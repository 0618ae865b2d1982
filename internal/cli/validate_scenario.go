package cli

import (
	"fmt"
	"io"

	"gopkg.in/yaml.v3"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

// scenarioOnly are top-level fields of a fusebox mock scenario
// (internal/sim's format) that a gateway configuration does not have.
var scenarioOnly = map[string]bool{"name": true, "seed": true, "latency": true, "output": true, "faults": true, "aws": true, "google": true, "azure": true}

// isScenario reports whether data looks like a fusebox mock scenario
// rather than a gateway configuration: a mapping with no providers and at
// least one field only scenarios have. A file that does not parse is left
// to the configuration's parser, whose messages name the line.
func isScenario(data []byte) bool {
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) != nil {
		return false
	}
	if _, ok := top["providers"]; ok {
		return false
	}
	for k := range top {
		if scenarioOnly[k] {
			return true
		}
	}
	return false
}

// validateScenario checks a scenario as fusebox mock would load it.
func validateScenario(path string, data []byte, out io.Writer) error {
	cfg, err := sim.ParseScenario(path, data)
	if err != nil {
		if list, ok := err.(sim.ScenarioErrors); ok {
			for _, e := range list {
				fmt.Fprintln(out, e.Error())
			}
			return fmt.Errorf("%w: %d problem(s) in a fusebox mock scenario", errInvalid, len(list))
		}
		return err
	}
	fmt.Fprintf(out, "%s: ok (a fusebox mock scenario, %d faults: fusebox mock --scenario %s)\n", path, len(cfg.Faults), path)
	return nil
}
