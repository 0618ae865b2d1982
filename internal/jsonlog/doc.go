// Package jsonlog makes the gateway's structured access log cheap: one line
// per request, in exactly the format of log/slog's JSONHandler.
//
// Two costs dominate such a line, and the package has a piece for each.
//
// Rendering. Through Logger.LogAttrs, a record with a dozen typed attributes
// costs about 1.6 µs and three allocations with slog.JSONHandler, of which
// the handler takes about 1 µs and two allocations (the Logger takes the
// rest: caller PC, clock, the record's attribute slice). NewHandler returns
// a handler that renders the common case (attributes of kind String, Int64,
// Uint64, Float64, Bool, Duration and Time, no groups, no ReplaceAttr, no
// AddSource) itself into a pooled buffer in about 0.4 µs with no
// allocation, and hands everything else to a slog.JSONHandler over the same
// writer. Its output is byte for byte what slog.JSONHandler writes; tests
// check that over random records and fuzz inputs. BenchmarkHandler and
// BenchmarkHandle measure both handlers side by side.
//
// Writing. slog makes one Write per record, and os.Stderr does not buffer,
// so each line is a write(2) system call: several microseconds on a small
// VM, more than rendering. Buffered gathers lines and writes them in
// batches, at most FlushEvery (100 ms) after the first line of a batch or
// when MaxBuffer (64 KiB) fills, and runs no goroutine or timer while idle.
//
// Put together:
//
//	out := jsonlog.NewBuffered(os.Stderr, jsonlog.BufferedSettings{})
//	defer out.Close()
//	logger := slog.New(jsonlog.NewHandler(out, nil))
//
// The price of Buffered is that a line may reach its destination up to
// FlushEvery late, and lines still buffered are lost if the process dies
// without calling Close. Use it for access logs, not for the last words of
// a crash.
package jsonlog
