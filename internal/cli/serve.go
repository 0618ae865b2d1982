package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/jsonlog"
	"github.com/spf13/cobra"
)

type serveOptions struct {
	config    string
	allowOpen bool
	drain     time.Duration
}

func serveCommand() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the gateway",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), o, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&o.config, "config", "c", "fusebox.yaml", "configuration file")
	cmd.Flags().BoolVar(&o.allowOpen, "allow-open", false, "listen beyond loopback even though no client keys are configured")
	cmd.Flags().DurationVar(&o.drain, "drain", 30*time.Second, "on shutdown, how long to let requests and streams in flight finish")
	return cmd
}

func runServe(ctx context.Context, o serveOptions, logOut io.Writer) error {
	cfg, err := config.Load(o.config)
	if err != nil {
		var list config.Errors
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintln(logOut, e.Error())
			}
			return fmt.Errorf("%s: %d problem(s); nothing started", o.config, len(list))
		}
		return err
	}
	listen := cfg.Listen
	if err := o.openCheck(cfg, listen); err != nil {
		return err
	}
	// Log lines are rendered by jsonlog (slog's JSON format, faster) and
	// written in batches, at most 100 ms late; stopping flushes them.
	out := jsonlog.NewBuffered(logOut, jsonlog.BufferedSettings{})
	defer out.Close()
	log := slog.New(jsonlog.NewHandler(out, nil))
	// A reload reads the file again; the listener stays where it is, so
	// the check against an open gateway is made for its address.
	reload := func() (*config.Config, error) {
		cfg, err := config.Load(o.config)
		if err != nil {
			return nil, err
		}
		return cfg, o.openCheck(cfg, listen)
	}
	srv, err := gateway.New(gateway.Options{Config: cfg, Logger: log, Load: reload})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	go reloadOnHangup(ctx, hup, srv, log)
	log.Info("fusebox listening", "addr", ln.Addr().String(), "models", len(cfg.Models), "providers", len(cfg.Providers))
	defer srv.Close()
	err = srv.ListenAndServe(ctx, ln, o.drain)
	if err != nil {
		log.Error("fusebox stopped", "error", err.Error())
	} else {
		log.Info("fusebox stopped", "addr", ln.Addr().String())
	}
	return err
}

// reloadOnHangup reloads the configuration at each SIGHUP until ctx ends.
// A refused configuration is logged with the reason; the old one stays.
func reloadOnHangup(ctx context.Context, hup <-chan os.Signal, srv *gateway.Server, log *slog.Logger) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if _, err := srv.Reload(); err != nil {
				log.Error("configuration reload refused; the old configuration stays in force", "error", err.Error())
			}
		}
	}
}

// openCheck refuses a configuration without client keys on an address
// beyond loopback, unless --allow-open was given.
func (o serveOptions) openCheck(cfg *config.Config, listen string) error {
	if len(cfg.Clients) == 0 && !o.allowOpen && !loopback(listen) {
		return fmt.Errorf("listen %s: no client keys are configured, so the gateway would be open to anyone who can reach it; "+
			"listen on a loopback address, add clients, or pass --allow-open", listen)
	}
	return nil
}

// loopback reports whether a listen address is on the loopback interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// discardLogger is a logger that writes nothing, for the demo's gateway.
func discardLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
