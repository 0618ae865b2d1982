// Package cli is the fusebox command line: one file per subcommand, each a
// constructor for its cobra command and a run function that takes its
// dependencies.
package cli

import (
	"context"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Run runs the fusebox command line with args (without the program name).
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	root := &cobra.Command{
		Use:           "fusebox",
		Short:         "Fusebox keeps AI-powered applications working while AI providers fail",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Version = "set" // makes cobra add --version; the template is the whole line
	root.SetVersionTemplate(versionLine(debug.ReadBuildInfo, stamp{version, revision}) + "\n")
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(serveCommand(), validateCommand(), demoCommand(), mockCommand(), benchCommand(), batchCommand(), versionCommand(), healthCommand(), configCommand(), modelsCommand(), keysCommand())
	return root.ExecuteContext(ctx)
}
