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

// Tests run with released buffers poisoned, so that any read of storage the
// sweep recycled too early shows up as NaN in a gradcheck.
func init() { poisonReleased = true }
