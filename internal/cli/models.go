package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/fuseboxhq/fusebox/internal/catalog"
	"github.com/spf13/cobra"
)

func modelsCommand() *cobra.Command {
	var provider string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List the built-in model catalog: each model's clouds, context window and list price",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runModels(cmd.OutOrStdout(), provider, asJSON)
		},
	}
	cmd.Flags().StringVar(&provider, "provider", "", "only the models of this provider type ("+strings.Join(catalog.Providers, ", ")+"), with their ids there")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the catalog as JSON")
	return cmd
}

// runModels writes the catalog, or the part of it provider offers, as a
// table or as JSON.
func runModels(out io.Writer, provider string, asJSON bool) error {
	if provider != "" && !slices.Contains(catalog.Providers, provider) {
		return fmt.Errorf("models: --provider %q: want one of %s", provider, strings.Join(catalog.Providers, ", "))
	}
	ms := slices.DeleteFunc(catalog.All(), func(m catalog.Model) bool {
		_, ok := m.Offer(provider)
		return provider != "" && !ok
	})
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(ms)
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	second := "CLOUDS"
	if provider != "" {
		second = "ID ON " + strings.ToUpper(provider)
	}
	fmt.Fprintf(tw, "NAME\t%s\tCONTEXT\tMAX OUT\tINPUT\tOUTPUT\tCACHED\n", second)
	for _, m := range ms {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, where(m, provider), tokens(m.Context), tokens(m.MaxOutput),
			dollars(m.Price.Input), dollars(m.Price.Output), dollars(m.Price.CachedInput))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(out, "\nPrices: US dollars per million tokens, the makers' list prices (standard tier; long prompts may cost more).")
	if slices.ContainsFunc(ms, func(m catalog.Model) bool { return strings.Contains(where(m, provider), "*") }) {
		fmt.Fprintln(out, "* retired on that cloud.")
	}
	fmt.Fprintln(out, "Sources:")
	var seen []*catalog.Source
	for _, m := range ms {
		if !slices.Contains(seen, m.Source) {
			seen = append(seen, m.Source)
			fmt.Fprintf(out, "  %s, %s (%s)\n", m.Source.Name, m.Source.AsOf, m.Source.URL)
		}
	}
	return nil
}

// where is a model's clouds, or with provider its id there (and a
// Bedrock model's profile geographies).
func where(m catalog.Model, provider string) string {
	if provider != "" {
		o, _ := m.Offer(provider)
		s := o.ID
		if len(o.Profiles) > 0 {
			s += " (" + strings.Join(o.Profiles, ",") + ")"
		}
		if o.Retired {
			s += " *"
		}
		return s
	}
	clouds := make([]string, len(m.Offers))
	for i, o := range m.Offers {
		clouds[i] = o.Provider
		if o.Retired {
			clouds[i] += "*"
		}
	}
	return strings.Join(clouds, ",")
}

// tokens writes a token count as its makers do: 128K, 64K, 1M.
func tokens(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "M"
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "M"
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', 2, 64) + "M"
	case n%1000 == 0:
		return strconv.Itoa(n/1000) + "K"
	case n%1024 == 0:
		return strconv.Itoa(n>>10) + "K"
	}
	return strconv.Itoa(n)
}

func dollars(v float64) string { return "$" + strconv.FormatFloat(v, 'f', -1, 64) }
