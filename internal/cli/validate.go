package cli

import (
	"errors"
	"fmt"
	"io"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/spf13/cobra"
)

func validateCommand() *cobra.Command {
	var noEnv bool
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a configuration file (or a fusebox mock scenario) and say exactly what is wrong",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return errors.New("usage: fusebox validate FILE (one configuration file, e.g. fusebox validate fusebox.yaml)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readConfigFile(args[0])
			switch {
			case err != nil:
				return err
			case isScenario(data):
				return validateScenario(args[0], data, cmd.OutOrStdout())
			case noEnv:
				return validateNoEnv(args[0], data, cmd.OutOrStdout())
			}
			return runValidate(args[0], cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&noEnv, "no-env", false, "check the structure only: read no environment variable (an unset ${VAR} is not an error), build no provider")
	return cmd
}

// errInvalid is returned after the problems have been printed.
var errInvalid = errors.New("the configuration is not valid")

func runValidate(path string, out io.Writer) error {
	cfg, err := config.Load(path)
	if err != nil {
		return printProblems(err, out)
	}
	if err := cfg.WeakSecrets(); err != nil { // validate is stricter than serve
		return printProblems(err, out)
	}
	if err := gateway.Check(cfg); err != nil {
		fmt.Fprintf(out, "%s: %v\n", path, err)
		return fmt.Errorf("%w: %v", errInvalid, err)
	}
	fmt.Fprintf(out, "%s: ok (%d providers, %d models)\n", path, len(cfg.Providers), len(cfg.Models))
	return nil
}

// printProblems prints a configuration's errors, one a line.
func printProblems(err error, out io.Writer) error {
	var list config.Errors
	if !errors.As(err, &list) {
		return err
	}
	for _, e := range list {
		fmt.Fprintln(out, e.Error())
	}
	return fmt.Errorf("%w: %d problem(s)", errInvalid, len(list))
}
