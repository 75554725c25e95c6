package ad

// FusedRuleNames lists the rows kept outside the rule table (ops_attn.go,
// ops_norm.go), for the completeness tests in package ad_test.
func FusedRuleNames() []string { return []string{sdpaRow.name, lnRow.name, rmsRow.name} }
