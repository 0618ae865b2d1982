package outage

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"strings"
)

// Chart geometry, in SVG user units.
const (
	chartWidth  = 1000
	plotLeft    = 70
	plotRight   = chartWidth - 60
	headerH     = 85
	panelH      = 160
	panelGap    = 60
	bandH       = 14
	plotW       = plotRight - plotLeft
	colourP50   = "#1f77b4"
	colourP99   = "#ff7f0e"
	colourError = "#d62728"
	colourStorm = "#fbe3e3"
)

// breakerColours are the colours of the breaker band, by state.
var breakerColours = map[string]string{
	"closed": "#2ca02c", "open": "#d62728", "half-open": "#f2b701",
}

// WriteSVG draws the result as an SVG chart: one panel per client with the
// p50 and p99 latency of each second (left axis, logarithmic) and its error
// rate (right axis), the storm shaded, and Fusebox's breaker state on the
// primary as a coloured band under its panel.
func (r *Result) WriteSVG(w io.Writer) error {
	bw := bufio.NewWriter(w)
	c := chart{w: bw, r: r}
	c.draw()
	return bw.Flush()
}

// chart draws one Result.
type chart struct {
	w      *bufio.Writer
	r      *Result
	lo, hi float64 // log10 of the latency axis's ends, in ms
}

func (c *chart) printf(format string, args ...any) { fmt.Fprintf(c.w, format, args...) }

func (c *chart) draw() {
	c.latencyRange()
	height := headerH + len(c.r.Rows)*(panelH+panelGap) + 10
	c.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		chartWidth, height, chartWidth, height)
	c.printf(`<rect width="100%%" height="100%%" fill="white"/>` + "\n")
	name, detail, _ := strings.Cut(c.r.describe(), " — ")
	c.printf(`<text x="%d" y="20" font-size="15"><tspan font-weight="bold">fusebox bench: %s</tspan> — %s</text>`+"\n", plotLeft, esc(name), esc(detail))
	c.printf(`<text x="%d" y="38" fill="#555">%s</text>`+"\n", plotLeft, esc(c.subtitle()))
	c.legend(plotLeft, 60)
	for i, row := range c.r.Rows {
		top := headerH + i*(panelH+panelGap) + 10
		c.panel(row, float64(top))
	}
	c.printf("</svg>\n")
}

// legend draws the key of lines and band colours.
func (c *chart) legend(x, y int) {
	advance := func(label string) { x += 27 + 6*len(label) + 16 }
	line := func(colour, label string, dash string) {
		c.printf(`<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" %s/>`, x, y-4, x+22, y-4, colour, dash)
		c.printf(`<text x="%d" y="%d">%s</text>`+"\n", x+27, y, esc(label))
		advance(label)
	}
	box := func(colour, label string) {
		c.printf(`<rect x="%d" y="%d" width="22" height="10" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, y-10, colour, x+27, y, esc(label))
		advance(label)
	}
	line(colourP50, "p50 latency (left, log)", "")
	line(colourP99, "p99 latency", "")
	line(colourError, "error rate (right)", `stroke-dasharray="5,3"`)
	box(colourStorm, "storm")
	for _, s := range []string{"closed", "open", "half-open"} {
		box(breakerColours[s], "breaker "+s)
	}
}

// latencyRange sets the latency axis to whole decades around every
// second's p50 and p99.
func (c *chart) latencyRange() {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range c.r.Rows {
		for _, s := range row.Series {
			if s.Requests == 0 {
				continue
			}
			lo, hi = math.Min(lo, math.Max(s.P50MS, 0.1)), math.Max(hi, math.Max(s.P99MS, 0.1))
		}
	}
	if math.IsInf(lo, 0) {
		lo, hi = 1, 1000
	}
	c.lo, c.hi = math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if c.hi <= c.lo {
		c.hi = c.lo + 1
	}
}

// x maps a time in seconds to the plot.
func (c *chart) x(sec float64) float64 {
	return plotLeft + sec/math.Max(c.r.Options.DurationS, 1e-9)*plotW
}

// yLatency maps a latency in ms to a panel whose top is top.
func (c *chart) yLatency(top, v float64) float64 {
	f := (math.Log10(math.Max(v, 0.1)) - c.lo) / (c.hi - c.lo)
	return top + panelH - math.Min(math.Max(f, 0), 1)*panelH
}

// yRate maps an error rate in [0, 1] to a panel whose top is top.
func (c *chart) yRate(top, v float64) float64 { return top + panelH - v*panelH }

// panel draws one client's panel.
func (c *chart) panel(row Row, top float64) {
	o := c.r.Options
	c.printf(`<text x="%d" y="%.1f"><tspan font-weight="bold">%s</tspan> — failed in storm %s, calls to primary in storm %d, failover %s, back on primary %s</text>`+"\n",
		plotLeft, top-6, esc(string(row.Client)), pct(row.StormFailure), row.PrimaryCalls, fmtOptMS(row.FailoverMS), fmtOptMS(row.RecoveryMS))
	c.printf(`<rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>`+"\n",
		c.x(o.StormStartS), top, c.x(o.StormStartS+o.StormLengthS)-c.x(o.StormStartS), panelH, colourStorm)
	c.axes(top)
	var p50, p99, errs []point
	for _, s := range row.Series {
		if s.Requests == 0 {
			p50, p99, errs = append(p50, point{}), append(p99, point{}), append(errs, point{})
			continue
		}
		x := c.x(float64(s.T) + 0.5)
		p50 = append(p50, point{x, c.yLatency(top, s.P50MS), true})
		p99 = append(p99, point{x, c.yLatency(top, s.P99MS), true})
		errs = append(errs, point{x, c.yRate(top, float64(s.Failed)/float64(s.Requests)), true})
	}
	c.line(p50, colourP50, "")
	c.line(p99, colourP99, "")
	c.line(errs, colourError, `stroke-dasharray="5,3"`)
	if row.Client == Fusebox {
		c.band(top + panelH + 18)
	}
}

// axes draws a panel's frame, its latency decades and error-rate ticks, and
// time ticks.
func (c *chart) axes(top float64) {
	c.printf(`<rect x="%d" y="%.1f" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", plotLeft, top, plotW, panelH)
	for d := c.lo; d <= c.hi; d++ {
		y := c.yLatency(top, math.Pow(10, d))
		c.printf(`<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, plotLeft, y, plotRight, y)
		c.printf(`<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", plotLeft-5, y+4, esc(decade(d)))
	}
	for _, f := range []float64{0, 0.5, 1} {
		y := c.yRate(top, f)
		c.printf(`<text x="%d" y="%.1f" fill="%s">%.0f%%</text>`+"\n", plotRight+5, y+4, colourError, 100*f)
	}
	step := niceStep(c.r.Options.DurationS)
	for t := 0.0; t <= c.r.Options.DurationS+1e-9; t += step {
		x := c.x(t)
		c.printf(`<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888"/>`, x, top+panelH, x, top+panelH+4)
		c.printf(`<text x="%.1f" y="%.1f" text-anchor="middle" font-size="10">%gs</text>`+"\n", x, top+panelH+14, t)
	}
}

// band draws Fusebox's breaker state over time at y.
func (c *chart) band(y float64) {
	c.printf(`<text x="%d" y="%.1f" text-anchor="end" font-size="10">breaker</text>`+"\n", plotLeft-5, y+bandH-3)
	state, from := "closed", 0.0
	end := c.r.Options.DurationS
	rect := func(to float64) {
		if to > from {
			c.printf(`<rect x="%.1f" y="%.1f" width="%.2f" height="%d" fill="%s"><title>%s</title></rect>`+"\n",
				c.x(from), y, c.x(to)-c.x(from), bandH, colourOf(state), esc(state))
		}
	}
	for _, t := range c.r.Transitions {
		at := math.Min(math.Max(t.AtMS/1000, 0), end)
		rect(at)
		state, from = t.To, at
	}
	rect(end)
}

func colourOf(state string) string {
	if c, ok := breakerColours[state]; ok {
		return c
	}
	return "#7f7f7f"
}

// point is a vertex of a line; ok is false for a gap.
type point struct {
	x, y float64
	ok   bool
}

// line draws pts as a path broken at gaps.
func (c *chart) line(pts []point, colour, extra string) {
	var d strings.Builder
	pen := false
	for _, p := range pts {
		if !p.ok {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&d, "%s%.1f,%.1f ", cmd, p.x, p.y)
		pen = true
	}
	if d.Len() > 0 {
		c.printf(`<path d="%s" fill="none" stroke="%s" stroke-width="1.5" %s/>`+"\n", strings.TrimSpace(d.String()), colour, extra)
	}
}

// niceStep returns a tick step giving about ten ticks over span seconds.
func niceStep(span float64) float64 {
	for _, s := range []float64{0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600} {
		if span/s <= 12 {
			return s
		}
	}
	return 1200
}

// subtitle gives the rate, latencies and Fusebox's breaker settings.
func (c *chart) subtitle() string {
	o := c.r.Options
	return fmt.Sprintf("%g req/s per client for %gs, latency median %s, p99 %s; fusebox breaker open %s, then 1 probe",
		o.Rate, o.DurationS, fmtMS(o.LatencyMS), fmtMS(o.P99MS), fmtMS(o.OpenMS))
}

// decade labels 10^d milliseconds.
func decade(d float64) string {
	if d >= 3 {
		return fmt.Sprintf("%g s", math.Pow(10, d-3))
	}
	return fmt.Sprintf("%g ms", math.Pow(10, d))
}

func esc(s string) string { return html.EscapeString(s) }
