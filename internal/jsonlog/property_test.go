package jsonlog

import (
	"errors"
	"log/slog"
	"math"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// For any record, NewHandler writes the same bytes as slog.JSONHandler.
func TestPropertyMatchesStdlib(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		r := slog.NewRecord(recordTimeGen().Draw(rt, "time"), levelGen().Draw(rt, "level"), stringGen().Draw(rt, "msg"), 0)
		r.AddAttrs(rapid.SliceOfN(attrGen(), 0, 14).Draw(rt, "attrs")...)
		got, want := renderBoth(rt, nil, nil, r)
		if got != want {
			rt.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

// FuzzHandler renders records built from the fuzzer's values through both
// handlers and compares the bytes.
func FuzzHandler(f *testing.F) {
	f.Add("msg", "key", "<&>\u2028\xff\x00", int64(-1), uint64(math.MaxUint64), 1e21, true, 2, int64(0))
	f.Add("", "", "", int64(0), uint64(0), math.NaN(), false, -4, int64(-1))
	f.Add("é", "\"\\", "\t\r\n", int64(253402300800), uint64(1), 1e-7, true, 100, int64(5)) // year 10000
	f.Add("x", "y", "z", int64(math.MaxInt64), uint64(2), math.Copysign(0, -1), false, math.MinInt, int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, msg, key, s string, i int64, u uint64, fl float64, b bool, level int, nanos int64) {
		r := slog.NewRecord(recordTime, slog.Level(level), msg, 0)
		r.AddAttrs(
			slog.String(key, s), slog.String(s, key), slog.Int64(key, i), slog.Uint64(s, u),
			slog.Float64(key, fl), slog.Bool(s, b), slog.Duration(key, time.Duration(i)),
			slog.Time(s, time.Unix(0, nanos).UTC()), slog.Time(key, time.Unix(i, nanos).In(time.FixedZone("", int(i%100000)))),
		)
		got, want := renderBoth(t, nil, nil, r)
		if got != want {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}

// stringGen draws strings that stress escaping: arbitrary runes, arbitrary
// bytes (so invalid UTF-8), and mixes of the characters with special
// handling.
func stringGen() *rapid.Generator[string] {
	special := rapid.SampledFrom([]string{
		"", "<", ">", "&", `"`, `\`, "\x00", "\x1f", "\x7f", "\t", "\n", "\r", "\b", "\f",
		"\u2028", "\u2029", "\ufffd", "\xff", "\xc3", "\xe2\x80", "\xed\xa0\x80", "é", "🎉", "a", "key",
	})
	return rapid.OneOf(
		rapid.String(),
		rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
		rapid.Map(rapid.SliceOfN(special, 0, 8), func(parts []string) string {
			var s string
			for _, p := range parts {
				s += p
			}
			return s
		}),
	)
}

func floatGen() *rapid.Generator[float64] {
	return rapid.OneOf(
		rapid.Float64(),
		rapid.Map(rapid.Uint64(), math.Float64frombits), // every bit pattern, NaNs included
		rapid.SampledFrom([]float64{
			0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.Inf(-1),
			math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64,
			1e21, 1e21 - 65536, 999999999999999999999, 1e-6, 1e-6 - 1e-22, 1e-7, 0.1, 1.0 / 3,
		}),
	)
}

var zones = []*time.Location{
	time.UTC, time.FixedZone("CET", 3600), time.FixedZone("", -(9*3600 + 30*60)),
	time.FixedZone("odd", 3*3600+25*60+17), time.FixedZone("far", -(24*3600 - 1)),
}

func timeGen() *rapid.Generator[time.Time] {
	return rapid.OneOf(
		rapid.Just(time.Time{}),
		rapid.Custom(func(t *rapid.T) time.Time {
			nanos := rapid.Int64().Draw(t, "unixnano")
			return time.Unix(0, nanos).In(rapid.SampledFrom(zones).Draw(t, "zone"))
		}),
		rapid.Custom(func(t *rapid.T) time.Time { // years -10..10010, beyond UnixNano's range
			year := rapid.IntRange(-10, 10010).Draw(t, "year")
			ns := rapid.IntRange(0, 999999999).Draw(t, "ns")
			ns = []int{ns, 0, ns / 1000 * 1000, ns / 1e6 * 1e6}[rapid.IntRange(0, 3).Draw(t, "trim")]
			return time.Date(year, time.Month(rapid.IntRange(1, 12).Draw(t, "month")), rapid.IntRange(1, 28).Draw(t, "day"),
				rapid.IntRange(0, 23).Draw(t, "hour"), rapid.IntRange(0, 59).Draw(t, "min"), rapid.IntRange(0, 59).Draw(t, "sec"),
				ns, rapid.SampledFrom(zones).Draw(t, "zone"))
		}),
	)
}

func recordTimeGen() *rapid.Generator[time.Time] {
	return rapid.OneOf(rapid.Just(recordTime), rapid.Just(recordTime.Add(time.Hour)), timeGen())
}

func levelGen() *rapid.Generator[slog.Level] {
	return rapid.OneOf(
		rapid.Map(rapid.IntRange(-20, 20), func(i int) slog.Level { return slog.Level(i) }),
		rapid.Map(rapid.Int(), func(i int) slog.Level { return slog.Level(i) }),
	)
}

// attrGen draws attributes of every kind; mostly fast-path kinds, sometimes
// ones that go to the delegate, so mixed records are covered too.
func attrGen() *rapid.Generator[slog.Attr] {
	return rapid.Custom(func(t *rapid.T) slog.Attr {
		key := stringGen().Draw(t, "key")
		switch rapid.IntRange(0, 11).Draw(t, "kind") {
		case 0:
			return slog.Int64(key, rapid.Int64().Draw(t, "int"))
		case 1:
			return slog.Uint64(key, rapid.Uint64().Draw(t, "uint"))
		case 2:
			return slog.Float64(key, floatGen().Draw(t, "float"))
		case 3:
			return slog.Bool(key, rapid.Bool().Draw(t, "bool"))
		case 4:
			return slog.Duration(key, time.Duration(rapid.Int64().Draw(t, "duration")))
		case 5:
			return slog.Time(key, timeGen().Draw(t, "time"))
		case 6:
			return slog.Any(key, rapid.SampledFrom([]any{nil, []int{1}, errors.New("e<&>"), map[string]float64{"x": 1}, stringer{}}).Draw(t, "any"))
		case 7:
			members := rapid.SliceOfN(rapid.Map(rapid.Int(), func(i int) slog.Attr { return slog.Int("i", i) }), 0, 2).Draw(t, "group")
			return slog.Attr{Key: key, Value: slog.GroupValue(members...)}
		default:
			return slog.String(key, stringGen().Draw(t, "string"))
		}
	})
}
