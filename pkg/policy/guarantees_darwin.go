package policy

// platformGuarantees: all four, through the calls above.
func platformGuarantees() Guarantees {
	return Guarantees{DescriptorPathCheck: true, DirLock: true, NoFollow: true, NoReplaceRename: true}
}
