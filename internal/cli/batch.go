package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/internal/batch"
	"github.com/fuseboxhq/fusebox/internal/config"
	"github.com/fuseboxhq/fusebox/internal/gateway"
	"github.com/fuseboxhq/fusebox/internal/jsonlog"
	"github.com/spf13/cobra"
)

type batchOptions struct {
	input, config, out, dead, retry, key, log string
	concurrency                               int
	maxCost                                   float64
	lineDeadline, every, drain                time.Duration
	progress                                  string
}

func batchCommand() *cobra.Command {
	var o batchOptions
	cmd := &cobra.Command{
		Use:   "batch IN.jsonl",
		Short: "Run a file of requests (OpenAI batch format) through the gateway in-process, resumable",
		Long: `batch runs each line of IN.jsonl ({"custom_id", "method", "url", "body"}, for
/v1/chat/completions, /v1/embeddings and /v1/messages) through a gateway built
from --config, in-process (nothing listens), with its ladders, breakers,
failover, limits, retries and cost. Answers go to --out, lines that fail for
good to --dead-letter; a journal beside --out makes a rerun of the same
command skip what is done. One run at a time writes an output: a second on
the same files (its lock, OUT.lock) says which process holds it and exits 1.
--retry-dead-letter runs a dead-letter file again.

Exit codes: 0 every line answered; 1 the batch could not run (files, another
run holding them, gateway);
2 bad flags or configuration; 3 some lines were dead-lettered; 4 stopped by
--max-cost or the client's budget (rerun to go on); 5 interrupted (rerun to
resume); 6 the gateway refused the client key.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.input = args[0]
			}
			if o.key == "" {
				o.key = os.Getenv("FUSEBOX_API_KEY")
			}
			return runBatch(cmd.Context(), o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.config, "config", "c", "fusebox.yaml", "configuration file")
	f.StringVar(&o.out, "out", "", "answers file (default: IN with .results.jsonl)")
	f.StringVar(&o.dead, "dead-letter", "", "dead-letter file (default: IN with .dead.jsonl)")
	f.StringVar(&o.retry, "retry-dead-letter", "", "run the requests of this dead-letter file instead of IN")
	f.IntVar(&o.concurrency, "concurrency", 64, "most lines in flight; throttles lower it, successes raise it back")
	f.Float64Var(&o.maxCost, "max-cost", 0, "stop taking lines before the batch spends more than this (USD; 0: no cap)")
	f.DurationVar(&o.lineDeadline, "line-deadline", 15*time.Minute, "how long a line is retried through outages before it is dead-lettered")
	f.StringVar(&o.key, "key", "", "client key to send, for configurations with clients: (default: $FUSEBOX_API_KEY)")
	f.StringVar(&o.log, "log", "", "gateway log file (default: --out with .log)")
	f.StringVar(&o.progress, "progress", "auto", "auto (a bar on a terminal, lines otherwise), bar, lines or none")
	f.DurationVar(&o.every, "progress-every", 10*time.Second, "how often a progress line is printed when not on a terminal")
	f.DurationVar(&o.drain, "drain", 30*time.Second, "on Ctrl-C, how long lines in flight may take to finish")
	return cmd
}

// paths fills in the default file names.
func (o *batchOptions) paths() (in string, p batch.Paths, err error) {
	in = o.input
	switch {
	case o.retry != "" && in != "":
		return "", p, errors.New("give IN.jsonl or --retry-dead-letter, not both")
	case o.retry != "":
		in = o.retry
	case in == "":
		return "", p, errors.New("give the input file: fusebox batch IN.jsonl --config fusebox.yaml")
	}
	stem := strings.TrimSuffix(in, ".jsonl")
	p = batch.Paths{Out: cmpOr(o.out, stem+".results.jsonl"), Dead: cmpOr(o.dead, stem+".dead.jsonl")}
	if p.Out == p.Dead || p.Out == in || p.Dead == in {
		return "", p, errors.New("the input, --out and --dead-letter must be three different files")
	}
	if o.concurrency < 1 || o.maxCost < 0 || o.lineDeadline <= 0 {
		return "", p, errors.New("--concurrency must be at least 1, --max-cost not negative, --line-deadline positive")
	}
	return in, p, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func usage(err error) error { return &exitError{ExitUsage, err} }

func runBatch(ctx context.Context, o batchOptions, stdout, stderr io.Writer) error {
	in, p, err := o.paths()
	if err != nil {
		return usage(err)
	}
	cfg, err := config.Load(o.config)
	if err != nil {
		var list config.Errors
		if errors.As(err, &list) {
			for _, e := range list {
				fmt.Fprintln(stderr, e.Error())
			}
			return usage(fmt.Errorf("%s: %d problem(s); nothing ran", o.config, len(list)))
		}
		return usage(err)
	}
	if len(cfg.Clients) > 0 && o.key == "" {
		return usage(fmt.Errorf("%s has clients: pass one's key with --key or FUSEBOX_API_KEY", o.config))
	}
	total, err := countLines(in)
	if err != nil {
		return usage(err)
	}
	logFile, err := os.OpenFile(cmpOr(o.log, strings.TrimSuffix(p.Out, ".jsonl")+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	logs := jsonlog.NewBuffered(logFile, jsonlog.BufferedSettings{})
	defer logs.Close()
	gw, err := gateway.New(gateway.Options{Config: cfg, Logger: slog.New(jsonlog.NewHandler(logs, nil))})
	if err != nil {
		return usage(err)
	}
	defer gw.Close()
	return runBatchOn(ctx, gw, cfg, o, in, p, total, stdout, stderr)
}

// runBatchOn runs the batch through gw and reports.
func runBatchOn(ctx context.Context, gw *gateway.Server, cfg *config.Config, o batchOptions, in string, p batch.Paths, total int64, stdout, stderr io.Writer) error {
	f, err := os.Open(in)
	if err != nil {
		return usage(err)
	}
	defer f.Close()
	var input io.Reader = f
	if o.retry != "" {
		input = batch.Requeue(f)
	}
	opts := batch.Options{Handler: gw.Handler(), Concurrency: o.concurrency, MaxCost: o.maxCost,
		Estimate: estimator(cfg), LineDeadline: o.lineDeadline, Lines: total}
	if o.key != "" {
		opts.Prepare = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+o.key) }
	}
	r, err := batch.New(opts)
	if err != nil {
		return usage(err)
	}
	start := time.Now()
	show := startProgress(o, r, total, stderr)
	s, err := runDraining(ctx, r, input, p, o.drain)
	show.stop()
	if err != nil {
		return err
	}
	return report(stdout, s, reportOf{in: in, p: p, total: total, took: time.Since(start)})
}

// runDraining runs r; when ctx ends it stops taking lines and lets those
// in flight finish for up to drain before cutting them.
func runDraining(ctx context.Context, r *batch.Runner, in io.Reader, p batch.Paths, drain time.Duration) (batch.Summary, error) {
	runCtx, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	stop := context.AfterFunc(ctx, func() {
		r.Stop()
		time.AfterFunc(drain, cut)
	})
	defer stop()
	s, err := r.Run(runCtx, in, p)
	if ctx.Err() != nil && s.Stopped == batch.StoppedByCaller {
		s.Stopped, s.Reason = batch.StoppedCanceled, "interrupted"
	}
	return s, err
}
