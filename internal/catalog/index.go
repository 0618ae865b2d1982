package catalog

// index maps every name a model is known by to its place in models.
var index, conflicts = buildIndex(models)

// buildIndex maps each model's name, and each id, alias and Bedrock
// profile id of its offers, to the model. It returns the names that two
// models claim (the catalog's tests require there be none; the first
// model keeps such a name).
func buildIndex(ms []Model) (map[string]int, []string) {
	idx := make(map[string]int, len(ms)*8)
	var clash []string
	add := func(name string, i int) {
		if j, ok := idx[name]; ok && j != i {
			clash = append(clash, name)
			return
		}
		idx[name] = i
	}
	for i := range ms {
		add(ms[i].Name, i)
		for _, o := range ms[i].Offers {
			add(o.ID, i)
			for _, a := range o.Aliases {
				add(a, i)
			}
			for _, p := range o.Profiles {
				add(p+"."+o.ID, i)
			}
		}
	}
	return idx, clash
}
