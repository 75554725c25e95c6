package ad

// RuleNames lists the names of every row of the rule table (for the
// completeness test in package ad_test).
func RuleNames() []string {
	var names []string
	for _, r := range allRules() {
		names = append(names, r.name)
	}
	return names
}

// SetPoisonReleased makes released buffers NaN-filled, so that any read of
// storage the sweep recycled too early shows up in a gradcheck.
func SetPoisonReleased(on bool) { poisonReleased = on }
