package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/fuseboxhq/fusebox/internal/sim"
)

type mockOptions struct {
	listen   string
	scenario string
	seed     uint64
	// mcp names a simulated MCP server served at /mcp beside the
	// provider; mcpStdio serves one on stdin and stdout instead.
	mcp, mcpStdio string
}

func mockCommand() *cobra.Command {
	var o mockOptions
	cmd := &cobra.Command{
		Use:   "mock",
		Short: "Run a simulated OpenAI-compatible provider with faults on a schedule",
		Long: "Run a simulated OpenAI-compatible provider. --scenario names a YAML file of latency, limits and " +
			"scheduled faults (see examples/scenarios); faults can also be set live with POST /sim/faults.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMock(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:9090", "address to serve on")
	cmd.Flags().StringVar(&o.scenario, "scenario", "", "scenario file (YAML); none: a healthy provider")
	cmd.Flags().Uint64Var(&o.seed, "seed", 0, "random seed when the scenario sets none")
	cmd.Flags().StringVar(&o.mcp, "mcp", "", "also serve a simulated MCP server of this name at /mcp (faults: POST /sim/mcp/faults)")
	cmd.Flags().StringVar(&o.mcpStdio, "mcp-stdio", "", "serve only a simulated MCP server of this name on stdin and stdout")
	return cmd
}

func runMock(ctx context.Context, o mockOptions, out io.Writer) error {
	if o.mcpStdio != "" {
		m := sim.NewMCP(o.mcpStdio)
		defer m.Close()
		return m.Run(ctx, &mcp.StdioTransport{})
	}
	cfg := sim.Config{Name: "mock", Seed: o.seed}
	if o.scenario != "" {
		var err error
		if cfg, err = sim.LoadScenario(o.scenario); err != nil {
			var list sim.ScenarioErrors
			if errors.As(err, &list) {
				for _, e := range list {
					fmt.Fprintln(out, e.Error())
				}
				return fmt.Errorf("%s: %d problem(s); nothing started", o.scenario, len(list))
			}
			return err
		}
		if cfg.Seed == 0 {
			cfg.Seed = o.seed
		}
	}
	s, err := sim.New(cfg)
	if err != nil {
		return err
	}
	defer s.Close()
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	handler := s.Handler()
	if o.mcp != "" {
		m := sim.NewMCP(o.mcp)
		defer m.Close()
		mux := http.NewServeMux()
		mux.Handle("/mcp", m.Handler())
		mux.Handle("/sim/mcp/faults", m.Handler())
		mux.Handle("/", handler)
		handler = mux
		fmt.Fprintf(out, "simulated MCP server %q on http://%s/mcp (faults: POST /sim/mcp/faults {\"hang\":\"10s\"}, {\"error\":true}, {\"lose_sessions\":true})\n", o.mcp, ln.Addr())
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(out, "simulated provider %q on http://%s/v1 (faults: GET/POST/DELETE /sim/faults, stats: GET /sim/stats)\n", s.Name(), ln.Addr())
	fmt.Fprintf(out, "it speaks Bedrock, Vertex AI, the Gemini API and Azure OpenAI too; point the clouds' own clients at it with:\n")
	for _, kv := range sim.ClientEnv("http://" + ln.Addr().String()) {
		fmt.Fprintf(out, "  export %s\n", kv)
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.Close() // release hung and stalled calls before shutting down
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	<-errc
	return nil
}
