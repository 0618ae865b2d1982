package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// faultReport is the body of GET, POST and DELETE /sim/faults.
type faultReport struct {
	Elapsed string        `json:"elapsed"`
	Faults  []FaultStatus `json:"faults"`
}

func (s *Server) writeFaults(w http.ResponseWriter) {
	writeJSON(w, http.StatusOK, faultReport{Elapsed: s.Elapsed().String(), Faults: s.Faults()})
}

// handleGetFaults serves GET /sim/faults: the time since Start and every
// fault, scheduled then live, with whether it is active and its hits.
func (s *Server) handleGetFaults(w http.ResponseWriter, r *http.Request) { s.writeFaults(w) }

// handleSetFaults serves POST /sim/faults: a fault object, or a list of
// them, replaces the live faults (as SetFaults). It answers as GET does, or
// 400 saying what is wrong.
func (s *Server) handleSetFaults(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 1<<20))
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "sim: cannot read the body: "+err.Error())
		return
	}
	var fs []Fault
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '{' {
		var f Fault
		err = json.Unmarshal(b, &f)
		fs = []Fault{f}
	} else {
		err = json.Unmarshal(b, &fs)
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", "sim: bad faults: "+err.Error())
		return
	}
	if err := s.SetFaults(fs); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "", err.Error())
		return
	}
	s.writeFaults(w)
}

// handleDeleteFaults serves DELETE /sim/faults: it removes the live faults,
// or with ?all=true every fault, scheduled ones too; it answers as GET does.
func (s *Server) handleDeleteFaults(w http.ResponseWriter, r *http.Request) {
	all, _ := strconv.ParseBool(r.URL.Query().Get("all"))
	if all {
		s.ClearFaults()
	} else {
		s.SetFaults(nil)
	}
	s.writeFaults(w)
}

// handleStats serves GET /sim/stats: Stats as JSON.
func (s *Server) handleStats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.Stats())
}

// faultJSON is a Fault's JSON form.
type faultJSON struct {
	Kind        FaultKind `json:"kind"`
	From        string    `json:"from,omitempty"`
	To          string    `json:"to,omitempty"`
	Every       string    `json:"every,omitempty"`
	For         string    `json:"for,omitempty"`
	Fraction    float64   `json:"fraction,omitempty"`
	Status      int       `json:"status,omitempty"`
	RetryAfter  string    `json:"retry_after,omitempty"`
	Extra       string    `json:"extra,omitempty"`
	AfterChunks int       `json:"after_chunks,omitempty"`
	Message     string    `json:"message,omitempty"`
	Code        string    `json:"code,omitempty"`
}

func (f Fault) toJSON() faultJSON {
	dur := func(d time.Duration) string {
		if d == 0 {
			return ""
		}
		return d.String()
	}
	return faultJSON{
		Kind: f.Kind, From: dur(f.From), To: dur(f.To), Every: dur(f.Every), For: dur(f.For),
		Fraction: f.Fraction, Status: f.Status, RetryAfter: dur(f.RetryAfter), Extra: dur(f.Extra),
		AfterChunks: f.AfterChunks, Message: f.Message, Code: f.Code,
	}
}

// MarshalJSON writes f with durations as strings ("1.5s"), leaving out
// zero fields.
func (f Fault) MarshalJSON() ([]byte, error) { return json.Marshal(f.toJSON()) }

// UnmarshalJSON reads f from its JSON form; unknown fields are an error.
// It does not validate f: SetFaults does.
func (f *Fault) UnmarshalJSON(data []byte) error {
	var j faultJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	var errs []error
	dur := func(field, s string) time.Duration {
		if s == "" {
			return 0
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: bad duration %q (want a number and a unit: 200ms, 5s, 2m)", field, s))
		}
		return d
	}
	*f = Fault{
		Kind: j.Kind, From: dur("from", j.From), To: dur("to", j.To),
		Every: dur("every", j.Every), For: dur("for", j.For), Fraction: j.Fraction,
		Status: j.Status, RetryAfter: dur("retry_after", j.RetryAfter), Extra: dur("extra", j.Extra),
		AfterChunks: j.AfterChunks, Message: j.Message, Code: j.Code,
	}
	return errors.Join(errs...)
}

// MarshalJSON writes s as its Fault's fields plus live, active and hits.
func (s FaultStatus) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		faultJSON
		Live   bool  `json:"live"`
		Active bool  `json:"active"`
		Hits   int64 `json:"hits"`
	}{s.Fault.toJSON(), s.Live, s.Active, s.Hits})
}

// UnmarshalJSON reads s as MarshalJSON writes it, so that a client can
// decode GET /sim/faults.
func (s *FaultStatus) UnmarshalJSON(data []byte) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return err
	}
	var extra struct {
		Live   bool  `json:"live"`
		Active bool  `json:"active"`
		Hits   int64 `json:"hits"`
	}
	if err := json.Unmarshal(data, &extra); err != nil {
		return err
	}
	delete(fields, "live")
	delete(fields, "active")
	delete(fields, "hits")
	rest, err := json.Marshal(fields)
	if err != nil {
		return err
	}
	if err := s.Fault.UnmarshalJSON(rest); err != nil {
		return err
	}
	s.Live, s.Active, s.Hits = extra.Live, extra.Active, extra.Hits
	return nil
}
