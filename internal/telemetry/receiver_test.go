package telemetry_test

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	colmetricspb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// receiver is an OTLP/HTTP collector for tests: it decodes the protobuf
// export requests (gzip or not) sent to /v1/traces and /v1/metrics.
type receiver struct {
	srv *httptest.Server

	// mu guards the fields below.
	mu       sync.Mutex
	spans    []gotSpan
	metrics  map[string]*metricspb.Metric // the latest export of each metric
	resource map[string]any
	requests int
	gzipped  int
}

// gotSpan is an exported span, its attributes decoded.
type gotSpan struct {
	*tracepb.Span
	attrs map[string]any
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{metrics: map[string]*metricspb.Metric{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

// URL is the receiver's base URL, for Config.Endpoint.
func (rc *receiver) URL() string { return rc.srv.URL }

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
		rc.mu.Lock()
		rc.gzipped++
		rc.mu.Unlock()
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		var req coltracepb.ExportTraceServiceRequest
		if err = proto.Unmarshal(data, &req); err == nil {
			rc.addSpans(&req)
		}
		resp = &coltracepb.ExportTraceServiceResponse{}
	case "/v1/metrics":
		var req colmetricspb.ExportMetricsServiceRequest
		if err = proto.Unmarshal(data, &req); err == nil {
			rc.addMetrics(&req)
		}
		resp = &colmetricspb.ExportMetricsServiceResponse{}
	default:
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.Write(out)
}

func (rc *receiver) addSpans(req *coltracepb.ExportTraceServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests++
	for _, rs := range req.ResourceSpans {
		rc.resource = attrMap(rs.GetResource().GetAttributes())
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				rc.spans = append(rc.spans, gotSpan{Span: s, attrs: attrMap(s.Attributes)})
			}
		}
	}
}

func (rc *receiver) addMetrics(req *colmetricspb.ExportMetricsServiceRequest) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.requests++
	for _, rm := range req.ResourceMetrics {
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				rc.metrics[m.Name] = m
			}
		}
	}
}

// snapshot returns what was received so far.
func (rc *receiver) snapshot() (spans []gotSpan, metrics map[string]*metricspb.Metric, requests int) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]gotSpan(nil), rc.spans...), rc.metrics, rc.requests
}

// attrMap decodes OTLP attributes: strings, ints, floats, bools and
// arrays of them.
func attrMap(kvs []*commonpb.KeyValue) map[string]any {
	m := make(map[string]any, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = anyValue(kv.Value)
	}
	return m
}

func anyValue(v *commonpb.AnyValue) any {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return x.IntValue
	case *commonpb.AnyValue_DoubleValue:
		return x.DoubleValue
	case *commonpb.AnyValue_BoolValue:
		return x.BoolValue
	case *commonpb.AnyValue_ArrayValue:
		var out []any
		for _, e := range x.ArrayValue.Values {
			out = append(out, anyValue(e))
		}
		return out
	}
	return nil
}
