package sandbox

// Access is what an operation does to the paths it is given.
type Access int

const (
	AccessRead  Access = iota // read content, list, stat
	AccessWrite               // create, change or remove
)

func (a Access) String() string {
	if a == AccessWrite {
		return "write"
	}
	return "read"
}

// LandlockStatus reports the kernel wall (see Restrict).
type LandlockStatus struct {
	Mode     string `json:"mode"`
	Enforced bool   `json:"enforced"`
	ABI      int    `json:"abi"`
	Reason   string `json:"reason,omitempty"`
}
