//go:build !linux && !darwin

package policy

// platformGuarantees: none of the four holds here (see the stand-ins
// above): fsbox refuses to run unless the policy accepts that in
// [sandbox] require.
func platformGuarantees() Guarantees { return Guarantees{} }
