package cli

import (
	"fmt"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/spf13/cobra"
)

func configCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "config",
		Short: "The configuration file's reference, and a commented file to start from",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "reference",
		Short: "Print every field of the configuration: its type, default and meaning (Markdown)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), config.Reference())
			return err
		},
	}, &cobra.Command{
		Use:   "example",
		Short: "Print a commented configuration to start from (fusebox config example > fusebox.yaml)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), config.Example())
			return err
		},
	})
	return cmd
}
