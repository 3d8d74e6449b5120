package lawload

import "slices"

// kernelCCs are the congestion controls the Linux kernel ships
// (net/ipv4/tcp_*.c), whether or not this kernel has them loaded or built.
var kernelCCs = []string{"bbr", "bic", "cdg", "cubic", "dctcp", "highspeed", "htcp", "hybla",
	"illinois", "lp", "nv", "reno", "scalable", "vegas", "veno", "westwood", "yeah"}

// KernelCC reports whether name is one of the kernel's own congestion
// controls: a name cclab knows even where this kernel lacks it.
func KernelCC(name string) bool { return slices.Contains(kernelCCs, name) }

// KernelCCs lists the kernel's own congestion controls.
func KernelCCs() []string { return slices.Clone(kernelCCs) }
