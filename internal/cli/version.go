package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine(debug.ReadBuildInfo))
			return nil
		},
	}
}

// versionLine describes the binary from its build information: the
// module's version ("(devel)" for a build from a checkout), the VCS
// revision and time, and whether the tree had changes.
func versionLine(read func() (*debug.BuildInfo, bool)) string {
	info, ok := read()
	if !ok {
		return "fusebox (no build information) " + runtime.Version()
	}
	line := "fusebox " + info.Main.Version
	var rev, at, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev != "" {
		line += " " + rev[:min(len(rev), 12)]
		if modified == "true" {
			line += "-dirty"
		}
		if at != "" {
			line += " (" + at + ")"
		}
	}
	return line + " " + info.GoVersion + " " + runtime.GOOS + "/" + runtime.GOARCH
}
