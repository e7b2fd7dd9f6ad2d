package search

// rankVariant is one ranking tried on the suite.
type rankVariant struct {
	name string
	rk   *ranking
}

// rankVariants are the rankings the tuning tried, for -rel.variants.
func rankVariants() []rankVariant {
	return nil
}
