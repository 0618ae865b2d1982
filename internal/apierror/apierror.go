// Package apierror writes errors in OpenAI's shape,
// {"error": {"message", "type", "param", "code"}}, the one shape every
// OpenAI route of the gateway answers with: its own, the jobs API's and
// the Files and Batch APIs'.
package apierror

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// body is the error object; param and code are null when empty.
type body struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// Write answers status with an error of type typ, code and param (either
// may be "", written as null) and msg.
func Write(w http.ResponseWriter, status int, typ, code, param, msg string) {
	e := body{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	if param != "" {
		e.Param = &param
	}
	data, _ := json.Marshal(struct {
		Error body `json:"error"`
	}{e})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	w.Write(data)
}

// RetryAfter formats a wait for the Retry-After header: whole seconds,
// rounded up, at least 1.
func RetryAfter(d time.Duration) string {
	s := int64((d + time.Second - 1) / time.Second)
	return strconv.FormatInt(max(s, 1), 10)
}
