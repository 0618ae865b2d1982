package sim

import (
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/fuseboxhq/fusebox/internal/bedrockapi"
	"github.com/fuseboxhq/fusebox/internal/provider/anthropic"
)

// bedrockOp is one of Bedrock's runtime operations.
type bedrockOp struct {
	path   string
	invoke bool // InvokeModel (a Claude body), not Converse
	stream bool
}

var bedrockOps = [...]bedrockOp{
	{"converse", false, false},
	{"converse-stream", false, true},
	{"invoke", true, false},
	{"invoke-with-response-stream", true, true},
}

// bedrockHandler serves POST /model/{modelId}/<op>: the request's
// credentials are checked as Bedrock checks them, its body translated to
// a chat completion (Converse) or a Messages request (InvokeModel for a
// Claude model), answered by the engine, and the answer translated back:
// JSON, an AWS event stream, or a Bedrock error.
func (s *Server) bedrockHandler(op bedrockOp) http.HandlerFunc {
	a := apiBedrockConverse
	if op.invoke {
		a = apiBedrockInvoke
	}
	return func(w http.ResponseWriter, r *http.Request) {
		body, bad := readBody(w, r)
		if bad != 0 {
			s.refuseBefore(a, OutcomeBadRequest)
			bedrockapi.WriteError(w, http.StatusBadRequest, bedrockapi.TypeValidation, "The request body could not be read, or is over 16 MiB.")
			return
		}
		if err := s.bedrockAuth(r, body); err != nil {
			s.refuseBefore(a, OutcomeUnauthorized)
			writeBedrockRefusal(w, err)
			return
		}
		start := s.clk.Now()
		rl, err := s.bedrockRelay(r, op, a, body)
		if err != nil {
			s.refuseBefore(a, OutcomeBadRequest)
			writeBedrockRefusal(w, err)
			return
		}
		defer rl.body.Close()
		s.answerBedrock(w, rl, op, r.PathValue("modelId"), start)
	}
}

// bedrockRelay translates a Bedrock body and runs it through the engine:
// a Converse body as a chat completion, an InvokeModel body as the
// Messages request it is. The error is the translation's refusal.
func (s *Server) bedrockRelay(r *http.Request, op bedrockOp, a api, body []byte) (*relayed, error) {
	model := r.PathValue("modelId")
	if !op.invoke {
		chat, err := bedrockapi.ConverseToChat(model, body, op.stream)
		if err != nil {
			return nil, err
		}
		return s.relay(r, chat, a), nil
	}
	mbody, err := bedrockapi.InvokeToMessages(model, body, op.stream)
	if err != nil {
		return nil, err
	}
	rl, _, err := s.relayMessages(r, mbody, a)
	return rl, err
}

// answerBedrock writes the engine's answer as Bedrock's: JSON, an event
// stream, or an error; a cut answer cuts the client's connection.
func (s *Server) answerBedrock(w http.ResponseWriter, rl *relayed, op bedrockOp, model string, start time.Time) {
	switch {
	case rl.status == 0:
		cutConnection(w)
	case rl.status != http.StatusOK:
		writeBedrockError(w, rl.readError())
	case op.stream:
		var rd io.Reader
		if op.invoke {
			rd = bedrockapi.NewInvokeStreamClock(anthropic.NewMessagesStream(rl.in, model), s.clk)
		} else {
			rd = bedrockapi.NewConverseStreamClock(rl.in, s.clk)
		}
		h := w.Header()
		h.Set("Content-Type", "application/vnd.amazon.eventstream")
		h.Set("X-Amzn-Bedrock-Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		rl.pump(w, rd)
		if rl.cut() {
			rl.endCut(w, garbageFrame)
		}
	default:
		var out []byte
		var err error
		if op.invoke {
			out, err = rl.messagesJSON(model)
		} else if b, rerr := io.ReadAll(rl.body); rerr != nil {
			err = rerr
		} else {
			out, err = bedrockapi.ChatToConverseLatency(b, s.clk.Now().Sub(start))
		}
		if err != nil {
			bedrockapi.WriteError(w, http.StatusInternalServerError, bedrockapi.TypeInternal, "simulator: "+err.Error())
			return
		}
		writeRaw(w, http.StatusOK, out)
	}
}

// garbageFrame is what a Garbage fault leaves of a Bedrock stream's next
// frame: the first half of one, its prelude promising bytes that never
// come.
var garbageFrame = func() []byte {
	f := bedrockapi.ExceptionFrame(bedrockapi.ExceptionInternalServer, "the rest of this frame never arrives")
	return f[:len(f)/2]
}()

// refuseBefore counts a call of API a refused before the engine saw it.
func (s *Server) refuseBefore(a api, o Outcome) {
	s.stats.receive(a)
	s.stats.finish(o)
}

// writeBedrockRefusal writes err, a *bedrockapi.Error or a Messages
// translation's refusal, as Bedrock does.
func writeBedrockRefusal(w http.ResponseWriter, err error) {
	var be *bedrockapi.Error
	if errors.As(err, &be) {
		be.Write(w)
		return
	}
	bedrockapi.WriteError(w, http.StatusBadRequest, bedrockapi.TypeValidation, err.Error())
}

// Bedrock's error types the bedrockapi package does not name.
const (
	typeModelNotReady     = "ModelNotReadyException"
	typeModelTimeout      = "ModelTimeoutException"
	typeResourceNotFound  = "ResourceNotFoundException"
	typeExpiredToken      = "ExpiredTokenException"
	msgInvalidSecurityTok = "The security token included in the request is invalid."
)

// writeBedrockError writes an engine error as Bedrock sends it: 429
// ThrottlingException, 503 (and 529, which Bedrock has not)
// ServiceUnavailableException, 500 and 502 InternalServerException, 408
// and 504 ModelTimeoutException, a model_not_ready fault 429
// ModelNotReadyException, 401 403 UnrecognizedClientException, 403
// AccessDeniedException, 404 ResourceNotFoundException, other 4xx
// ValidationException.
func writeBedrockError(w http.ResponseWriter, e engineError) {
	status, typ, msg := http.StatusBadRequest, bedrockapi.TypeValidation, e.msg
	switch {
	case e.code == "model_not_ready":
		status, typ = http.StatusTooManyRequests, typeModelNotReady
	case e.code == "content_filter":
		msg = "The request was blocked by the model's content filters (" + e.param + ")."
	case e.status == http.StatusTooManyRequests:
		status, typ, msg = e.status, bedrockapi.TypeThrottling, "Too many requests, please wait before trying again. ("+e.msg+")"
	case e.status == http.StatusServiceUnavailable || e.status == 529:
		status, typ = http.StatusServiceUnavailable, bedrockapi.TypeServiceUnavailable
	case e.status == http.StatusRequestTimeout || e.status == http.StatusGatewayTimeout:
		status, typ = http.StatusRequestTimeout, typeModelTimeout
	case e.status >= 500:
		status, typ = http.StatusInternalServerError, bedrockapi.TypeInternal
	case e.status == http.StatusUnauthorized:
		status, typ, msg = http.StatusForbidden, bedrockapi.TypeUnrecognizedClient, msgInvalidSecurityTok
	case e.status == http.StatusForbidden:
		status, typ = e.status, bedrockapi.TypeAccessDenied
	case e.status == http.StatusNotFound:
		status, typ = e.status, typeResourceNotFound
	}
	bedrockapi.WriteError(w, status, typ, msg)
}

// bedrockAuth checks a request's credentials as Bedrock does: a SigV4
// signature by AWS.Keys or a key the sim issued (which must not have
// expired, and must come with its session token), or a bearer API key of
// AWS.APIKeys. With neither Keys nor APIKeys configured, any well-formed
// signature or bearer token passes, but keys the sim issued are still
// verified.
func (s *Server) bedrockAuth(r *http.Request, body []byte) error {
	now := s.clk.Now()
	auth := r.Header.Get("Authorization")
	id := credentialID(auth)
	k, issued := s.issued.lookupKey(id)
	if issued {
		if !now.Before(k.expires) {
			return &bedrockapi.Error{Status: http.StatusForbidden, Type: typeExpiredToken, Message: "The security token included in the request is expired"}
		}
		if r.Header.Get("X-Amz-Security-Token") != k.session {
			return &bedrockapi.Error{Status: http.StatusForbidden, Type: bedrockapi.TypeUnrecognizedClient, Message: msgInvalidSecurityTok}
		}
	}
	cfg := &s.cfg.AWS
	if cfg.openSigV4() && !issued {
		return wellFormedAuth(r, auth)
	}
	lookup := func(kid string) (string, bool) {
		if kid == id && issued {
			return k.secret, true
		}
		secret, ok := cfg.Keys[kid]
		return secret, ok
	}
	bearer := func(t string) bool { return slices.Contains(cfg.APIKeys, t) }
	return bedrockapi.VerifySigV4(r, body, cfg.region(), now, lookup, bearer)
}

// credentialID returns the access key id of a SigV4 Authorization header,
// or "".
func credentialID(auth string) string {
	_, rest, ok := strings.Cut(auth, "Credential=")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// wellFormedAuth accepts a bearer token or a SigV4 header with every part
// SigV4 requires, without checking the signature.
func wellFormedAuth(r *http.Request, auth string) error {
	switch {
	case auth == "":
		return &bedrockapi.Error{Status: http.StatusForbidden, Type: bedrockapi.TypeMissingAuthenticationToken, Message: "Missing Authentication Token"}
	case strings.HasPrefix(auth, "Bearer ") && strings.TrimSpace(auth[7:]) != "":
		return nil
	case strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") && strings.Contains(auth, "Credential=") &&
		strings.Contains(auth, "SignedHeaders=") && strings.Contains(auth, "Signature=") && r.Header.Get("X-Amz-Date") != "":
		return nil
	}
	return &bedrockapi.Error{Status: http.StatusBadRequest, Type: bedrockapi.TypeIncompleteSignature,
		Message: "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters, and the request an X-Amz-Date."}
}
