package config

import (
	"slices"
	"testing"
	"time"
)

func TestJobAliasDefaults(t *testing.T) {
	c, err := Parse("f.yaml", with(
		"jobs:", // 8
		"  - name: video",
		"    targets: [{provider: openai, model: sora-2}]",
		"  - name: draw",
		"    api: images",
		"    resubmits: 0",
		"    targets: [{provider: openai, model: gpt-image-1, keys: [k2]}]",
	), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	v, d := c.Jobs[0], c.Jobs[1]
	vt := v.Targets[0]
	switch {
	case v.API != JobVideos || v.Resubmits != 1 || v.MaxInFlight != 16 || v.MinInFlight != 1 ||
		v.PollInterval != 10*time.Second || v.Retention != 168*time.Hour:
		t.Errorf("video = %+v", v)
	case v.Timeouts != (JobTimeouts{Submit: time.Minute, Poll: 10 * time.Second, Idle: 30 * time.Second}):
		t.Errorf("timeouts = %+v", v.Timeouts)
	case vt.SubmitPath != "/videos" || vt.PollPath != "/videos/{id}" || vt.ContentPath != "/videos/{id}/content" ||
		vt.LookupPath != "" || len(vt.Keys) != 1 || vt.Keys[0] != "k1":
		t.Errorf("video target = %+v", vt)
	case v.Breaker.Open != 5*time.Second || v.ResubmitBreaker.Open != 5*time.Second:
		t.Errorf("breakers %+v %+v", v.Breaker, v.ResubmitBreaker)
	case d.Resubmits != 0 || d.Targets[0].SubmitPath != "/images/generations" || d.Targets[0].Keys[0] != "k2":
		t.Errorf("draw = %+v", d)
	}
}

func TestJobAliasErrors(t *testing.T) {
	got := parseErrors(t, with(
		"jobs:",                // 8
		"  - name: smart",      // 9: the chat alias's name
		"    api: audio",       // 10
		"    min_in_flight: 9", // 11
		"    max_in_flight: 4", // 12
		"    resubmit_breaker: {failure_rate: 2}", // 13
		"    targets:", // 14
		"      - {provider: anthropic, model: x}",                                   // 15
		"      - {provider: nope, model: x}",                                        // 16
		"      - {provider: openai, poll_path: /videos, lookup_path: \"/k?{key}\"}", // 17
		"  - name: pics",  // 18
		"    api: images", // 19
		"    targets: [{provider: openai, model: i, content_path: \"/x/{id}\", price: {per_image: -1}}]", // 20
		"  - name: empty", // 21
	))
	want := []string{
		`f.yaml:9: jobs[0].name: duplicate alias "smart" (first on line 5)`,
		`f.yaml:10: jobs[0].api: unknown job API "audio" (known: videos, images)`,
		`f.yaml:11: jobs[0].min_in_flight: is 9, above max_in_flight (4)`,
		`f.yaml:13: jobs[0].resubmit_breaker.failure_rate: must be a fraction in (0, 1], got 2`,
		`f.yaml:15: jobs[0].targets[0].provider: provider "anthropic" is of type anthropic; job APIs need type openai`,
		`f.yaml:16: jobs[0].targets[1].provider: unknown provider "nope" (known: anthropic, openai)`,
		`f.yaml:17: jobs[0].targets[2].model: target has no model`,
		`f.yaml:17: jobs[0].targets[2].poll_path: must hold {id} once, got "/videos"`,
		`f.yaml:17: jobs[0].targets[2].lookup_path: must be a path, without a query or fragment, got "/k?{key}"`,
		`f.yaml:20: jobs[1].targets[0].content_path: does not apply to the images API, which answers at once`,
		`f.yaml:20: jobs[1].targets[0].price.per_image: must not be negative, got -1`,
		`f.yaml:21: jobs[2].targets: job alias "empty" has no targets`,
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("missing %s", w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d errors, want %d:\n%v", len(got), len(want), got)
	}
}

// TestJobAliasInClientModels: a client may be allowed a job alias, and an
// unknown name lists the job aliases among the known.
func TestJobAliasInClientModels(t *testing.T) {
	got := parseErrors(t, with(
		"jobs: [{name: video, targets: [{provider: openai, model: sora-2}]}]", // 8
		"clients: [{name: c, key: k, models: [video, nothing]}]",              // 9
	))
	want := `f.yaml:9: clients[0].models[1]: unknown model alias "nothing" (known: smart, video; or provider/model)`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
