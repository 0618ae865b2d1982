package outage

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/fuseboxhq/fusebox/internal/catalog"
	"github.com/fuseboxhq/fusebox/internal/sim"
)

// The cross-cloud scenario's model, region and AWS keys. The keys are the
// simulator's, made up for the run: the Bedrock sim verifies every
// signature against them.
const (
	claudeModel  = "claude-sonnet-4-5"
	awsRegion    = "us-east-1"
	awsKeyID     = "AKIDFUSEBOXBENCH"
	awsSecret    = "fusebox-bench-secret"
	anthropicKey = "sim-key"
	// anthropicVersion is the anthropic-version header of the Messages
	// API calls; bedrockVersion the anthropic_version of InvokeModel's.
	anthropicVersion = "2023-06-01"
	bedrockVersion   = "bedrock-2023-05-31"
	// claudeMaxTokens is the max_tokens of every Messages request.
	claudeMaxTokens = 256
)

// claudePrice is the catalog's price of claudeModel, the same on Anthropic
// and on Bedrock.
var claudePrice = func() price {
	m, ok := catalog.Lookup(catalog.Anthropic, claudeModel)
	if !ok {
		panic("outage: the catalog has no " + claudeModel)
	}
	return price{input: m.Price.Input, output: m.Price.Output}
}()

// prices are the primary's and the secondary's prices in scenario s.
func prices(s Scenario) (primary, secondary price) {
	if s.crossCloud() {
		return claudePrice, claudePrice
	}
	return primaryPrice, secondaryPrice
}

// targetModel is the model the clients ask each provider for in scenario
// s (Fusebox's alias lists it on both targets).
func targetModel(s Scenario) string {
	if s.crossCloud() {
		return claudeModel
	}
	return model
}

// simAWS is the AWS setting of the providers: the Bedrock paths take only
// signatures made with the run's keys.
func simAWS() sim.AWS {
	return sim.AWS{Region: awsRegion, Keys: map[string]string{awsKeyID: awsSecret}}
}

// crossCloudProviders is the providers block of Fusebox's configuration in
// the cross-cloud scenario: Anthropic's Messages API on the primary, AWS
// Bedrock with static keys on the secondary.
func crossCloudProviders(primary, secondary *provider) string {
	return fmt.Sprintf("  %s: {type: anthropic, base_url: %q, keys: [%s]}\n", primary.name, primary.root, anthropicKey) +
		fmt.Sprintf("  %s: {type: bedrock, region: %s, base_url: %q, aws: {access_key_id: %s, secret_access_key: %s}}\n",
			secondary.name, awsRegion, secondary.root, awsKeyID, awsSecret)
}

// messagesBody is every cross-cloud request: the prompt as one user
// message, in Anthropic's Messages format. With model "" it is InvokeModel's
// body, which names the model in its URL and carries anthropic_version.
func messagesBody(model string) []byte {
	req := map[string]any{
		"max_tokens": claudeMaxTokens,
		"messages":   []map[string]string{{"role": "user", "content": prompt}},
	}
	if model != "" {
		req["model"] = model
	} else {
		req["anthropic_version"] = bedrockVersion
	}
	b, _ := json.Marshal(req)
	return b
}

// messageUsage is the part of a Messages answer the clients read.
type messageUsage struct {
	Type  string `json:"type"`
	Usage *struct {
		Input  int `json:"input_tokens"`
		Output int `json:"output_tokens"`
	} `json:"usage"`
}

// readMessage reads a Messages answer's usage into a.
func readMessage(body []byte, a *answer) error {
	var m messageUsage
	if err := json.Unmarshal(body, &m); err != nil {
		return fmt.Errorf("outage: reading the answer: %w", err)
	}
	if m.Type != "message" || m.Usage == nil {
		return errors.New("outage: answer is not a message with usage")
	}
	a.usage = usage{m.Usage.Input, m.Usage.Output}
	return nil
}

// postMessages sends one Messages request to base (an API root ending in
// /v1: the primary's, or Fusebox's) and reads the whole answer.
func (r *rig) postMessages(ctx context.Context, base, model string) (answer, error) {
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/messages", bytes.NewReader(messagesBody(model)))
	if err != nil {
		return answer{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("X-Api-Key", anthropicKey)
	hr.Header.Set("Anthropic-Version", anthropicVersion)
	resp, err := r.http.Do(hr)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return answer{}, &statusError{status: resp.StatusCode, wait: retryAfter(resp.Header), body: string(msg)}
	}
	a := answer{target: resp.Header.Get("X-Fusebox-Target"), firstByte: time.Now()}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return a, fmt.Errorf("outage: reading the answer: %w", err)
	}
	return a, readMessage(body, &a)
}

// bedrockSigner signs retry+failover's Bedrock calls with the run's
// keys: the SDK's own SigV4 signer, as the AWS SDK's Bedrock client would.
var bedrockSigner = v4.NewSigner()

// bedrockModelID is Bedrock's id of claudeModel in awsRegion (its
// inference profile), as the gateway resolves it.
var bedrockModelID = func() string {
	id, _, ok := catalog.Resolve(catalog.Bedrock, claudeModel, awsRegion)
	if !ok {
		panic("outage: the catalog has no Bedrock id for " + claudeModel)
	}
	return id
}()

// invokeBedrock calls InvokeModel on the secondary, as the AWS SDK's
// Bedrock client sends it (POST /model/{id}/invoke, signed with SigV4 for
// service "bedrock"), and reads the Claude answer. It is not the SDK's
// client so that the serving binary does not link bedrockruntime for the
// bench alone: that package's init is the largest of the binary's.
func (r *rig) invokeBedrock(ctx context.Context) (answer, error) {
	body := messagesBody("")
	u := r.secondary.root + "/model/" + url.PathEscape(bedrockModelID) + "/invoke"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", "application/json")
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: awsKeyID, SecretAccessKey: awsSecret}
	if err := bedrockSigner.SignHTTP(ctx, creds, hr, hex.EncodeToString(sum[:]), "bedrock", awsRegion, time.Now()); err != nil {
		return answer{}, err
	}
	resp, err := r.http.Do(hr)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return answer{}, &statusError{status: resp.StatusCode, wait: retryAfter(resp.Header), body: string(msg)}
	}
	a := answer{firstByte: time.Now()}
	out, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return a, fmt.Errorf("outage: reading the answer: %w", err)
	}
	return a, readMessage(out, &a)
}

// retriedWith calls call with naivePolicy and returns the last call's
// answer.
func retriedWith(ctx context.Context, call func(context.Context) (answer, error)) (answer, error) {
	var a answer
	err := naivePolicy.Do(ctx, func(ctx context.Context, _ int) error {
		var err error
		a, err = call(ctx)
		return err
	})
	return a, err
}
