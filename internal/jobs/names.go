package jobs

import (
	"maps"
	"slices"
)

// Names returns the job aliases' names, sorted, for the model list
// (GET /v1/models). A nil Jobs has none.
func (j *Jobs) Names() []string {
	if j == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(j.aliases))
}

// Has reports whether name is a job alias.
func (j *Jobs) Has(name string) bool {
	if j == nil {
		return false
	}
	_, ok := j.aliases[name]
	return ok
}
