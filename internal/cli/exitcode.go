package cli

import "errors"

// The exit codes of fusebox batch (docs/BATCHES.md); other commands exit
// 1 on any error.
const (
	ExitError       = 1 // the batch could not be run: its files, the gateway
	ExitUsage       = 2 // bad flags or configuration: nothing ran
	ExitDeadLetters = 3 // finished; some lines went to the dead-letter file
	ExitStoppedCost = 4 // stopped by --max-cost or the client's budget; rerun to go on
	ExitInterrupted = 5 // interrupted (Ctrl-C, SIGTERM); rerun to resume
	ExitKeyRefused  = 6 // the gateway refused the client key (--key)
)

// exitError is an error that asks for a particular exit code.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// ExitCode returns the exit code for what Run returned: 0 for nil, the
// code a command asked for, or 1.
func ExitCode(err error) int {
	var e *exitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &e):
		return e.code
	}
	return ExitError
}
