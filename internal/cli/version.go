package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and revision are stamped at link time by builds that have no
// module version or VCS information of their own to record: the container
// image (.dockerignore leaves out .git; docker build --build-arg VERSION=…
// --build-arg REVISION=…) and release archives (.goreleaser.yaml), with
//
//	-ldflags "-X github.com/fuseboxhq/fusebox/internal/cli.version=v1.2.3
//	          -X github.com/fuseboxhq/fusebox/internal/cli.revision=<commit>"
//
// Left empty (go install, go build), `fusebox version` reads the build
// information Go records (debug.ReadBuildInfo). They are the only
// package-level variables of the package: -X can set nothing else.
var version, revision string

// stamp is what the link stamped: a version and a revision, each "" when
// not stamped.
type stamp struct{ version, revision string }

func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, the source revision and the Go version it was built with",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), versionLine(debug.ReadBuildInfo, stamp{version, revision}))
			return nil
		},
	}
}

// versionLine describes the binary: its version and revision as stamped,
// else from its build information (the module's version, "(devel)" for a
// build from a checkout; the VCS revision and time, and whether the tree
// had changes), then the Go version and platform.
func versionLine(read func() (*debug.BuildInfo, bool), st stamp) string {
	info, ok := read()
	if !ok {
		info = &debug.BuildInfo{Main: debug.Module{Version: "(no build information)"}, GoVersion: runtime.Version()}
	}
	v, rev, at, modified := info.Main.Version, "", "", ""
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
	if st.version != "" {
		v = st.version
	}
	if st.revision != "" && st.revision != rev {
		rev, at, modified = st.revision, "", "" // the VCS facts are of another revision
	}
	line := "fusebox " + v
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
