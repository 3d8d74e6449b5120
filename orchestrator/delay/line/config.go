package line

import (
	"net/netip"
	"time"
)

// MaxClasses is how many delay classes one port may have.
const MaxClasses = 16 // line.h DL_MAX_CLASSES

// MaxPorts is how many ports one line serves.
const MaxPorts = 1024 // line.h DL_MAX_PORTS

// MinBuffer is the smallest class buffer: two 64 KB GSO packets.
const MinBuffer = 2 * (65536 + 256 + 10 + 16)

// A Class is one delay a port applies, with the bytes its FIFO may hold.
type Class struct {
	Delay  time.Duration
	Buffer int64
}

// A Port is one place the line delays packets: the sink socket it reads,
// the port socket it writes, its classes and the class of each source.
type Port struct {
	Name    string // for reports, e.g. "edge0-0/h0"
	RxFD    int
	TxFD    int
	Classes []Class
	Sources map[netip.Addr]int // IPv4 source -> index in Classes
}

// A PortUpdate is a port's new classes and sources (Line.Update).
type PortUpdate struct {
	Classes []Class
	Sources map[netip.Addr]int // IPv4 source -> index in Classes
}

// Config is a whole line.
type Config struct {
	Ports []Port
	// CPU pins the thread (-1: no pinning).
	CPU int
	// RTPriority is its SCHED_FIFO priority (0: normal scheduling).
	RTPriority int
	// Margin is the initial spin margin before a due time (0: 60 us); it
	// adapts to how late the machine wakes the thread.
	Margin time.Duration
	// Tolerance is lateness the line accepts in order to spin less.
	Tolerance time.Duration
}
