package jobs

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/fuseboxhq/fusebox/internal/apierror"
)

// apiError is an answer in OpenAI's error shape, with its status. It is
// kept in a record for the answer a retry of a refused or lost submit
// gets.
type apiError struct {
	Status     int           `json:"status"`
	Type       string        `json:"type"`
	Code       string        `json:"code,omitempty"`
	Param      string        `json:"param,omitempty"`
	Message    string        `json:"message"`
	RetryAfter time.Duration `json:"retry_after,omitempty"`
	// JobID, when set, is sent as x-fusebox-job-id: the job the gateway
	// keeps for a submit whose answer was lost.
	JobID string `json:"job_id,omitempty"`
}

// errorf returns an apiError.
func errorf(status int, typ, code, param, msg string) *apiError {
	return &apiError{Status: status, Type: typ, Code: code, Param: param, Message: msg}
}

func badRequest(param, msg string) *apiError {
	return errorf(http.StatusBadRequest, "invalid_request_error", "", param, msg)
}

// write answers e: {"error":{"message","type","param","code"}}.
func (e *apiError) write(w http.ResponseWriter) {
	h := w.Header()
	if e.RetryAfter > 0 {
		h.Set("Retry-After", apierror.RetryAfter(e.RetryAfter))
	}
	if e.JobID != "" {
		h.Set("X-Fusebox-Job-Id", e.JobID)
	}
	apierror.Write(w, e.Status, e.Type, e.Code, e.Param, e.Message)
}

// writeJSON answers v as JSON with its length.
func writeJSON(w http.ResponseWriter, status int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		panic("jobs: " + err.Error()) // the package's own types always marshal
	}
	writeRaw(w, status, data)
}

// writeRaw answers a JSON body.
func writeRaw(w http.ResponseWriter, status int, data []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	w.Write(data)
}

// notFound is the answer for a job that does not exist or is another
// client's: the two look the same.
func notFound(id string) *apiError {
	return errorf(http.StatusNotFound, "invalid_request_error", "video_not_found", "id", "No video found with id '"+id+"'.")
}
