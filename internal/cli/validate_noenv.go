package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/fuseboxhq/fusebox/internal/config"
)

// envRef matches a ${VAR} reference with no default (a ${VAR:-default}
// takes its default when VAR is unset, as it always does).
var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// noEnvValue stands for every variable with no default under validate
// --no-env: the environment is not read, so a file is judged on its
// structure alone.
func noEnvValue(name string) string { return "no-env-" + strings.ToLower(name) }

// validateNoEnv checks a configuration's structure without its
// environment: each ${VAR} is a stand-in value, and a problem on a line
// that takes a variable is not reported, since the real value is not
// known. The gateway is not built (credentials and secrets are not there).
func validateNoEnv(path string, data []byte, out io.Writer) error {
	var unset []string
	for _, m := range envRef.FindAllSubmatch(data, -1) {
		if name := string(m[1]); !slices.Contains(unset, name) {
			unset = append(unset, name)
		}
	}
	_, err := config.Parse(path, data, func(name string) (string, bool) {
		if slices.Contains(unset, name) {
			return noEnvValue(name), true
		}
		return "", false // ${VAR:-default}: its default
	})
	var list config.Errors
	if err != nil && !errors.As(err, &list) {
		return err
	}
	lines := strings.Split(string(data), "\n")
	var kept config.Errors
	for _, e := range list {
		if e.Line > 0 && e.Line <= len(lines) && envRef.MatchString(lines[e.Line-1]) {
			continue // the line's value comes from the environment
		}
		kept = append(kept, e)
	}
	for _, e := range kept {
		fmt.Fprintln(out, e.Error())
	}
	if len(kept) > 0 {
		return fmt.Errorf("%w: %d problem(s)", errInvalid, len(kept))
	}
	slices.Sort(unset)
	fmt.Fprintf(out, "%s: ok, structure only (--no-env: %d variable(s) not read: %s)\n", path, len(unset), strings.Join(unset, ", "))
	return nil
}

// readConfigFile reads the file validate was given, with the message
// config.Load gives for a file that cannot be read.
func readConfigFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		_, lerr := config.Load(path) // the same words serve and validate use
		if lerr != nil {
			return nil, lerr
		}
		return nil, err
	}
	return data, nil
}
