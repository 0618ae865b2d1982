package keys

import (
	"encoding/hex"
	"errors"
	"math"
	"strconv"
	"time"
)

// Spec is what a new key may do: a clients: entry without its key.
type Spec struct {
	Name   string   `json:"name"`
	Models []string `json:"models"`
	Limits Limits   `json:"limits"`
	Budget Budget   `json:"budget"`
	Weight int      `json:"weight"`
}

// Patch changes a key: each field set replaces the record's, and Rotate
// gives it a new token (the old one is refused from then on).
type Patch struct {
	// Name is refused: a key's name names its spending and never changes.
	Name   *string      `json:"name"`
	Rotate bool         `json:"rotate"`
	Models *[]string    `json:"models"`
	Limits *PatchLimits `json:"limits"`
	Budget *PatchBudget `json:"budget"`
	Weight *int         `json:"weight"`
}

// PatchLimits changes the limits given, keeping the others.
type PatchLimits struct {
	RPM *int `json:"rpm"`
	TPM *int `json:"tpm"`
}

// PatchBudget changes the budgets given, keeping the others.
type PatchBudget struct {
	Daily   *float64 `json:"daily"`
	Monthly *float64 `json:"monthly"`
}

// apply returns r changed by p at now, and the new token if p rotates.
func (p Patch) apply(r Record, now time.Time) (Record, string) {
	token := ""
	if p.Rotate {
		token = newToken()
		sum := Sum(token)
		r.Hash, r.Hint = encodeHash(sum[:]), hint(token)
	}
	if p.Models != nil {
		r.Models = *p.Models
	}
	if l := p.Limits; l != nil {
		r.Limits.RPM = deref(l.RPM, r.Limits.RPM)
		r.Limits.TPM = deref(l.TPM, r.Limits.TPM)
	}
	if b := p.Budget; b != nil {
		r.Budget.Daily = deref(b.Daily, r.Budget.Daily)
		r.Budget.Monthly = deref(b.Monthly, r.Budget.Monthly)
	}
	if p.Weight != nil {
		r.Weight = max(*p.Weight, 1)
	}
	r.Updated, r.Rev = now, r.Rev+1
	return r, token
}

func deref[T any](p *T, or T) T {
	if p == nil {
		return or
	}
	return *p
}

// FieldError is a field of a Spec or Patch that is not valid.
type FieldError struct {
	Field string // e.g. limits.rpm
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// maxName bounds a key's name, in bytes; maxModels its list of models.
const (
	maxName   = 128
	maxModels = 256
	maxWeight = 1000
)

// Check reports the first field of s that is not valid.
func (s Spec) Check() error {
	switch {
	case s.Name == "":
		return &FieldError{"name", "a key needs a name"}
	case len(s.Name) > maxName:
		return &FieldError{"name", "is " + strconv.Itoa(len(s.Name)) + " bytes long (at most " + strconv.Itoa(maxName) + ")"}
	case !printable(s.Name):
		return &FieldError{"name", "must be printable ASCII: it names the client in logs and metrics"}
	}
	return checkSettings(&s.Models, &s.Limits.RPM, &s.Limits.TPM, &s.Budget.Daily, &s.Budget.Monthly, &s.Weight)
}

// Check reports the first field of p that is not valid.
func (p Patch) Check() error {
	if p.Name != nil {
		return &FieldError{"name", "a key's name does not change (it names its spending); mint a new key instead"}
	}
	var rpm, tpm *int
	var daily, monthly *float64
	if p.Limits != nil {
		rpm, tpm = p.Limits.RPM, p.Limits.TPM
	}
	if p.Budget != nil {
		daily, monthly = p.Budget.Daily, p.Budget.Monthly
	}
	return checkSettings(p.Models, rpm, tpm, daily, monthly, p.Weight)
}

// checkSettings checks the settings a Spec and a Patch share; nil: not set.
func checkSettings(models *[]string, rpm, tpm *int, daily, monthly *float64, weight *int) error {
	if models != nil {
		if len(*models) > maxModels {
			return &FieldError{"models", "lists " + strconv.Itoa(len(*models)) + " models (at most " + strconv.Itoa(maxModels) + ")"}
		}
		for i, m := range *models {
			if m == "" || len(m) > 512 || !printable(m) {
				return &FieldError{"models[" + strconv.Itoa(i) + "]", "must be a model alias or provider/model name"}
			}
		}
	}
	for _, n := range []struct {
		f string
		v *int
	}{{"limits.rpm", rpm}, {"limits.tpm", tpm}} {
		if n.v != nil && *n.v < 0 {
			return &FieldError{n.f, "must not be negative (0: no limit)"}
		}
	}
	for _, n := range []struct {
		f string
		v *float64
	}{{"budget.daily", daily}, {"budget.monthly", monthly}} {
		if n.v != nil && (*n.v < 0 || math.IsInf(*n.v, 0) || math.IsNaN(*n.v)) {
			return &FieldError{n.f, "must be a USD amount, 0 or more (0: no budget)"}
		}
	}
	if weight != nil && (*weight < 0 || *weight > maxWeight) {
		return &FieldError{"weight", "must be from 1 to " + strconv.Itoa(maxWeight) + " (0: the default, 1)"}
	}
	return nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

func encodeHash(b []byte) string { return hex.EncodeToString(b) }

func decodeHash(s string, dst []byte) (int, error) {
	if hex.DecodedLen(len(s)) != len(dst) {
		return 0, errors.New("keys: bad hash")
	}
	return hex.Decode(dst, []byte(s))
}
