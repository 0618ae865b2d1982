package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// keysOptions are what every fusebox keys subcommand shares: the gateway
// and how to reach its admin API.
type keysOptions struct {
	url       string
	tokenFile string
	json      bool
	timeout   time.Duration
}

// keySettings are the flags of mint and set; only those given are sent.
type keySettings struct {
	models         []string
	rpm, tpm       int
	daily, monthly float64
	weight         int
	rotate         bool
	changed        func(name string) bool
}

func keysCommand() *cobra.Command {
	o := &keysOptions{}
	cmd := &cobra.Command{
		Use:   "keys",
		Short: "Mint, list, show, rotate, change and revoke client keys on a running gateway",
		Long: "fusebox keys calls a running gateway's admin API (/fusebox/keys) with the admin token, read from\n" +
			"FUSEBOX_ADMIN_TOKEN or --admin-token-file (never a flag's value, which other users can see).\n" +
			"A minted or rotated key is printed once: the gateway keeps only its hash.",
	}
	cmd.PersistentFlags().StringVar(&o.url, "url", "http://127.0.0.1:8080", "the gateway's base URL")
	cmd.PersistentFlags().StringVar(&o.tokenFile, "admin-token-file", "", "a file holding the admin token (default: $FUSEBOX_ADMIN_TOKEN)")
	cmd.PersistentFlags().BoolVar(&o.json, "json", false, "print the gateway's JSON answer")
	cmd.PersistentFlags().DurationVar(&o.timeout, "timeout", 10*time.Second, "how long to wait for the gateway")
	cmd.AddCommand(
		keysSettingsCommand(o, "mint NAME", "Mint a key for a new client; the key is printed once", "POST"),
		keysSettingsCommand(o, "set ID", "Change a key's models, limits, budget or weight", "PATCH"),
		keysIDCommand(o, "show ID", "Show a key (never the key itself)", "GET", ""),
		keysIDCommand(o, "rotate ID", "Give a key a new secret; the old one is refused at once", "PATCH", `{"rotate":true}`),
		keysIDCommand(o, "revoke ID", "Revoke a key: refused from the next request on", "DELETE", ""),
		&cobra.Command{Use: "list", Short: "List the minted keys", Args: cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return runKeys(cmd.Context(), o, "GET", "", nil, cmd.OutOrStdout())
			}},
	)
	return cmd
}

// keysSettingsCommand is mint or set: a name or id and the settings flags.
func keysSettingsCommand(o *keysOptions, use, short, method string) *cobra.Command {
	ks := &keySettings{}
	cmd := &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1)}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		ks.changed = cmd.Flags().Changed
		body := ks.body()
		path := "/" + url.PathEscape(args[0])
		if method == "POST" {
			body["name"], path = args[0], ""
		}
		return runKeys(cmd.Context(), o, method, path, body, cmd.OutOrStdout())
	}
	f := cmd.Flags()
	f.StringSliceVar(&ks.models, "models", nil, "the aliases (or provider/model) the key may use; empty: all")
	f.IntVar(&ks.rpm, "rpm", 0, "requests per minute (0: no limit)")
	f.IntVar(&ks.tpm, "tpm", 0, "tokens per minute (0: no limit)")
	f.Float64Var(&ks.daily, "daily", 0, "USD a UTC day (0: no budget)")
	f.Float64Var(&ks.monthly, "monthly", 0, "USD a UTC month (0: no budget)")
	f.IntVar(&ks.weight, "weight", 0, "share of a saturated target (default 1)")
	return cmd
}

// body is the JSON object of the settings flags given.
func (ks *keySettings) body() map[string]any {
	b := map[string]any{}
	if ks.changed("models") {
		b["models"] = ks.models
	}
	limits, budget := map[string]any{}, map[string]any{}
	if ks.changed("rpm") {
		limits["rpm"] = ks.rpm
	}
	if ks.changed("tpm") {
		limits["tpm"] = ks.tpm
	}
	if ks.changed("daily") {
		budget["daily"] = ks.daily
	}
	if ks.changed("monthly") {
		budget["monthly"] = ks.monthly
	}
	if len(limits) > 0 {
		b["limits"] = limits
	}
	if len(budget) > 0 {
		b["budget"] = budget
	}
	if ks.changed("weight") {
		b["weight"] = ks.weight
	}
	return b
}

// keysIDCommand is show, rotate or revoke: one key by id.
func keysIDCommand(o *keysOptions, use, short, method, body string) *cobra.Command {
	return &cobra.Command{Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var b any
			if body != "" {
				b = json.RawMessage(body)
			}
			return runKeys(cmd.Context(), o, method, "/"+url.PathEscape(args[0]), b, cmd.OutOrStdout())
		}}
}

// adminToken reads the admin token from the file given, else the
// environment.
func (o *keysOptions) adminToken() (string, error) {
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return "", fmt.Errorf("keys: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if t := os.Getenv("FUSEBOX_ADMIN_TOKEN"); t != "" {
		return t, nil
	}
	return "", errors.New("keys: no admin token: set FUSEBOX_ADMIN_TOKEN or pass --admin-token-file")
}

// runKeys sends one admin request and prints its answer.
func runKeys(ctx context.Context, o *keysOptions, method, path string, body any, out io.Writer) error {
	token, err := o.adminToken()
	if err != nil {
		return err
	}
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(o.url, "/")+"/fusebox/keys"+path, rd)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("keys: %w", err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Message string } `json:"error"`
		}
		json.Unmarshal(data, &e)
		return fmt.Errorf("keys: the gateway answered %s: %s", resp.Status, cmpOr(e.Error.Message, strings.TrimSpace(string(data))))
	}
	if o.json {
		_, err := out.Write(data)
		return err
	}
	return printKeys(data, out)
}

// keyLine is a key as the admin API answers it.
type keyLine struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Key    string   `json:"key"`
	Hint   string   `json:"hint"`
	Models []string `json:"models"`
	Limits struct {
		RPM int `json:"rpm"`
		TPM int `json:"tpm"`
	} `json:"limits"`
	Budget struct {
		Daily   float64 `json:"daily"`
		Monthly float64 `json:"monthly"`
	} `json:"budget"`
	Weight   int  `json:"weight"`
	Shadowed bool `json:"shadowed"`
	Deleted  bool `json:"deleted"`
}

// printKeys prints an answer as a table, and a new key on its own line.
func printKeys(data []byte, out io.Writer) error {
	var list struct {
		Data []keyLine `json:"data"`
	}
	var one keyLine
	if json.Unmarshal(data, &list) != nil || list.Data == nil {
		if err := json.Unmarshal(data, &one); err != nil {
			return fmt.Errorf("keys: the gateway's answer is not JSON: %v", err)
		}
		if one.Deleted {
			fmt.Fprintf(out, "%s revoked\n", one.ID)
			return nil
		}
		list.Data = []keyLine{one}
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tKEY\tMODELS\tRPM\tTPM\tDAILY\tMONTHLY\tWEIGHT")
	for _, k := range list.Data {
		models := strings.Join(k.Models, ",")
		if models == "" {
			models = "all"
		}
		name := k.Name
		if k.Shadowed {
			name += " (shadowed by the configuration)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%g\t%g\t%d\n", k.ID, name, k.Hint, models,
			k.Limits.RPM, k.Limits.TPM, k.Budget.Daily, k.Budget.Monthly, k.Weight)
	}
	tw.Flush()
	if one.Key != "" {
		fmt.Fprintf(out, "\nkey: %s\nThis is the only time the key is shown: the gateway keeps its hash alone.\n", one.Key)
	}
	return nil
}
