package intswitch

import (
	"fmt"

	"cclab/internal/units"
)

// SetRate changes the rate a running switch port stamps into INT records
// (and scales its RED and QCN thresholds by, when they are given for a
// reference rate), after the port's link changed rate: the laws read the
// new one from the next packet on. Nothing changes on error.
func (s *Switch) SetRate(node, iface string, rate units.Rate) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.ports {
		if p.Node != node || p.Iface != iface {
			continue
		}
		pc, err := p.Marking().portCfg(rate)
		if err != nil {
			return fmt.Errorf("switch port %s/%s at %v: %w", node, iface, rate, err)
		}
		if err := s.objs.PortCfgs.Put(uint32(i), &pc); err != nil {
			return fmt.Errorf("switch port %s/%s rate: %w", node, iface, err)
		}
		s.ports[i].Rate = rate
		return nil
	}
	return fmt.Errorf("the switch has no port %s/%s", node, iface)
}

// Rate is the rate a port stamps, read back from the kernel (Mbit/s; 0
// for a rate that is not a whole number of them).
func (s *Switch) Rate(node, iface string) (uint32, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, p := range s.ports {
		if p.Node == node && p.Iface == iface {
			var pc switchbpfPortCfg
			if err := s.objs.PortCfgs.Lookup(uint32(i), &pc); err != nil {
				return 0, fmt.Errorf("switch port %s/%s: %w", node, iface, err)
			}
			return pc.RateMbps, nil
		}
	}
	return 0, fmt.Errorf("the switch has no port %s/%s", node, iface)
}
