package store

// SetFillPercent sets how full b's pages are packed when they split, for
// the rest of the transaction: a value near 1 suits keys written in
// ascending order (a bulk load), halving the pages the default (0.5) leaves.
// Values outside [0.1, 1] are clamped by bbolt.
func (b *Bucket) SetFillPercent(p float64) {
	if b.b != nil {
		b.b.FillPercent = p
	}
}
