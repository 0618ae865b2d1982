package sim

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxForm bounds the bodies the credential services read.
const maxForm = 64 << 10

// handleToken serves POST /token, an OAuth2 token endpoint as Google's
// (and, for client_credentials, Entra ID's) answers: grant_type
// urn:ietf:params:oauth:grant-type:jwt-bearer with an assertion (a
// service account's signed JWT), refresh_token with client_id,
// client_secret and refresh_token (authorized_user ADC files), or
// client_credentials with client_id and client_secret. It answers
// {"access_token","expires_in","token_type":"Bearer"}, or 400
// {"error","error_description"} naming the bad parameter.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "The request body is not a form of at most 64 KiB.")
		return
	}
	now := s.clk.Now()
	f := r.PostForm
	switch g := f.Get("grant_type"); g {
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		if msg := s.checkAssertion(f.Get("assertion"), audiences(r), now); msg != "" {
			oauthError(w, http.StatusBadRequest, "invalid_grant", msg)
			return
		}
	case "refresh_token":
		switch {
		case f.Get("client_id") == "" || f.Get("client_secret") == "":
			oauthError(w, http.StatusUnauthorized, "invalid_client", "client_id and client_secret are required.")
			return
		case !keyAccepted(s.cfg.Google.RefreshTokens, f.Get("refresh_token")):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "refresh_token: Bad Request")
			return
		}
	case "client_credentials":
		if f.Get("client_id") == "" || f.Get("client_secret") == "" {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "client_id and client_secret are required.")
			return
		}
	case "":
		oauthError(w, http.StatusBadRequest, "invalid_request", "grant_type: missing")
		return
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type: "+strconv.Quote(truncate(g, 80))+" is not supported")
		return
	}
	s.writeAccessToken(w, now)
}

// writeAccessToken issues a token and answers it as Google does.
func (s *Server) writeAccessToken(w http.ResponseWriter, now time.Time) {
	life := s.cfg.Google.lifetime()
	tok := s.issued.token(now.Add(life), now)
	s.stats.creds.Add(1)
	writeJSON(w, http.StatusOK, struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int64  `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}{tok, int64(life / time.Second), "Bearer"})
}

// audiences are the aud values a JWT assertion may name: this endpoint's
// URL as the client reached it, or Google's.
func audiences(r *http.Request) [3]string {
	return [3]string{"http://" + r.Host + r.URL.Path, "https://" + r.Host + r.URL.Path, "https://oauth2.googleapis.com/token"}
}

// checkAssertion checks a service account's JWT: RS256, an issuer (one of
// Google.ServiceAccounts, whose key must have signed it, when any are
// set), aud this endpoint, exp after now. It returns what is wrong, never
// quoting the assertion.
func (s *Server) checkAssertion(jwt string, aud [3]string, now time.Time) string {
	if jwt == "" {
		return "assertion: missing"
	}
	h, rest, ok1 := strings.Cut(jwt, ".")
	c, sig, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || len(jwt) > 16<<10 {
		return "assertion: not a JWT (want header.claims.signature)"
	}
	var head struct{ Alg string }
	var claims struct {
		Iss, Scope string
		Aud        json.RawMessage
		Exp, Iat   json.Number
	}
	if !decodeSegment(h, &head) {
		return "assertion: the header is not base64url JSON"
	}
	if !decodeSegment(c, &claims) {
		return "assertion: the claims are not base64url JSON"
	}
	if head.Alg != "RS256" {
		return "assertion: alg is " + strconv.Quote(truncate(head.Alg, 20)) + ", want RS256"
	}
	if claims.Iss == "" {
		return "assertion: iss: missing"
	}
	var a string
	if json.Unmarshal(claims.Aud, &a) != nil || (a != aud[0] && a != aud[1] && a != aud[2]) {
		return "assertion: aud: want this token endpoint's URL"
	}
	exp, err := claims.Exp.Int64()
	if err != nil {
		return "assertion: exp: missing or not a whole number"
	}
	if !now.Before(time.Unix(exp, 0)) {
		return "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. exp: expired"
	}
	if len(s.saKeys) == 0 {
		return ""
	}
	pub, ok := s.saKeys[claims.Iss]
	if !ok {
		return "Invalid JWT Signature. iss: not a known service account"
	}
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !verifyRS256(pub, jwt[:len(h)+1+len(c)], raw) {
		return "Invalid JWT Signature."
	}
	return ""
}

func verifyRS256(pub *rsa.PublicKey, signed string, sig []byte) bool {
	sum := sha256.Sum256([]byte(signed))
	return rsa.VerifyPKCS1v15(pub, crypto.SHA256, sum[:], sig) == nil
}

// decodeSegment decodes a JWT segment into v.
func decodeSegment(seg string, v any) bool {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(seg, "="))
	if err != nil {
		return false
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v) == nil
}

func oauthError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}{code, desc})
}

// truncate cuts s to at most n bytes, for quoting client input in errors.
func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// handleMetadata serves the GCE metadata server's paths that Google's
// auth libraries read (GET /computeMetadata/v1/…): the default service
// account's token, email and scopes, the project id and number, and the
// universe domain. A request without Metadata-Flavor: Google is a 403, as
// on GCE.
func (s *Server) handleMetadata(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Metadata-Flavor", "Google")
	if r.Header.Get("Metadata-Flavor") != "Google" {
		h.Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte("Missing required header \"Metadata-Flavor\": \"Google\"\n"))
		return
	}
	text := func(v string) {
		h.Set("Content-Type", "application/text")
		w.Write([]byte(v))
	}
	switch strings.TrimSuffix(r.PathValue("path"), "/") {
	case "instance/service-accounts/default/token":
		s.writeAccessToken(w, s.clk.Now())
	case "instance/service-accounts/default/email":
		text(s.cfg.Google.email())
	case "instance/service-accounts/default/scopes":
		text("https://www.googleapis.com/auth/cloud-platform\n")
	case "project/project-id":
		text(s.cfg.Google.project())
	case "project/numeric-project-id":
		text("123456789012")
	case "universe/universe-domain":
		text("googleapis.com")
	case "":
		text("instance/\nproject/\n")
	default:
		h.Set("Content-Type", "text/html; charset=UTF-8")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte("Not Found\n"))
	}
}

// handleSTS serves POST / as AWS STS answers the query protocol, for
// Action=AssumeRoleWithWebIdentity (RoleArn, RoleSessionName and
// WebIdentityToken required): credentials for AWS.CredentialLifetime that
// the Bedrock paths accept. Other actions are a 400 InvalidAction.
func (s *Server) handleSTS(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		stsError(w, http.StatusBadRequest, "InvalidParameterValue", "The request body is not a form of at most 64 KiB.")
		return
	}
	f := r.PostForm
	if a := f.Get("Action"); a != "AssumeRoleWithWebIdentity" {
		stsError(w, http.StatusBadRequest, "InvalidAction", "Could not find operation "+truncate(a, 64)+" for version "+truncate(f.Get("Version"), 16))
		return
	}
	for _, p := range [...]string{"RoleArn", "RoleSessionName", "WebIdentityToken"} {
		if f.Get(p) == "" {
			stsError(w, http.StatusBadRequest, "ValidationError", "1 validation error detected: Value null at '"+p+"' failed to satisfy constraint: Member must not be null")
			return
		}
	}
	now := s.clk.Now()
	id, k := s.issued.key(now.Add(s.cfg.AWS.lifetime()), now)
	s.stats.creds.Add(1)
	role := f.Get("RoleArn")
	name := truncate(f.Get("RoleSessionName"), 64)
	roleName := role[strings.LastIndexByte(role, '/')+1:]
	type credentials struct {
		AccessKeyID     string `xml:"AccessKeyId"`
		SecretAccessKey string
		SessionToken    string
		Expiration      string
	}
	type user struct {
		Arn           string
		AssumedRoleID string `xml:"AssumedRoleId"`
	}
	type result struct {
		Credentials                 credentials
		AssumedRoleUser             user
		SubjectFromWebIdentityToken string
		Provider                    string
		Audience                    string
	}
	type answer struct {
		XMLName  xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ AssumeRoleWithWebIdentityResponse"`
		Result   result   `xml:"AssumeRoleWithWebIdentityResult"`
		Metadata struct {
			RequestID string `xml:"RequestId"`
		} `xml:"ResponseMetadata"`
	}
	a := answer{Result: result{
		Credentials:                 credentials{id, k.secret, k.session, k.expires.UTC().Format(time.RFC3339)},
		AssumedRoleUser:             user{"arn:aws:sts::123456789012:assumed-role/" + truncate(roleName, 64) + "/" + name, "AROASIMULATEDROLE:" + name},
		SubjectFromWebIdentityToken: "sim-subject", Provider: "sim", Audience: "sts.amazonaws.com",
	}}
	a.Metadata.RequestID = randomHex(16)
	writeXML(w, http.StatusOK, a)
}

func stsError(w http.ResponseWriter, status int, code, msg string) {
	type body struct {
		XMLName xml.Name `xml:"https://sts.amazonaws.com/doc/2011-06-15/ ErrorResponse"`
		Error   struct {
			Type, Code, Message string
		}
		RequestID string `xml:"RequestId"`
	}
	var b body
	b.Error.Type, b.Error.Code, b.Error.Message = "Sender", code, msg
	b.RequestID = randomHex(16)
	writeXML(w, status, b)
}

func writeXML(w http.ResponseWriter, status int, v any) {
	body, err := xml.Marshal(v)
	if err != nil {
		panic("sim: " + err.Error()) // the package's own types always marshal
	}
	h := w.Header()
	h.Set("Content-Type", "text/xml")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}

// handleContainerCreds serves GET /v2/credentials/{id} (and GET
// /v2/credentials), the container credentials endpoint the AWS SDKs read
// from AWS_CONTAINER_CREDENTIALS_FULL_URI: with the Authorization header
// AWS.ContainerToken (any non-empty one when unset), the JSON ECS answers
// ({"AccessKeyId","SecretAccessKey","Token","Expiration","RoleArn"}) with
// credentials for AWS.CredentialLifetime; otherwise 401 or 403
// {"code","message"}.
func (s *Server) handleContainerCreds(w http.ResponseWriter, r *http.Request) {
	auth := r.Header.Get("Authorization")
	switch {
	case auth == "":
		writeJSON(w, http.StatusUnauthorized, struct{ Code, Message string }{"Unauthorized", "Authorization: missing"})
		return
	case s.cfg.AWS.ContainerToken != "" && auth != s.cfg.AWS.ContainerToken:
		writeJSON(w, http.StatusForbidden, struct{ Code, Message string }{"AccessDenied", "Authorization: not the container's token"})
		return
	}
	now := s.clk.Now()
	id, k := s.issued.key(now.Add(s.cfg.AWS.lifetime()), now)
	s.stats.creds.Add(1)
	writeJSON(w, http.StatusOK, struct {
		AccessKeyID     string `json:"AccessKeyId"`
		SecretAccessKey string
		Token           string
		Expiration      string
		RoleArn         string
	}{id, k.secret, k.session, k.expires.UTC().Format(time.RFC3339), "arn:aws:iam::123456789012:role/sim-task"})
}
