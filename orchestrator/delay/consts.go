package delay

// Constants of bpf/delay.h, which bpf2go does not carry over
// (TestHeaderConstants checks them against the header).
const (
	// Mark is the skb mark of a packet that has served its delay.
	Mark             = 0xcc1ade1a
	delayEngineLine  = 1
	delayEngineNetem = 2
	maxSources       = 4096
)
