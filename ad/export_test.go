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
