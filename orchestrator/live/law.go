package live

import (
	"cclab/kmod/lawload"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"cclab/internal/nsexec"
	"cclab/kmod/law"
	"cclab/orchestrator/calibrate"
	"cclab/orchestrator/flows"
	"cclab/orchestrator/netbuild"
)

// A Law is what `topo up --cc` gave the hosts.
type Law struct {
	Name string `json:"name"`
	// Settings are what it was registered with: the user's, then what
	// the calibration derived (not for the kernel's own controls).
	Settings    []string           `json:"settings,omitempty"`
	Calibration *calibrate.Result  `json:"calibration,omitempty"`
	Derived     *calibrate.Derived `json:"derived,omitempty"`
}

// CheckLaw checks a --cc law and its name=value settings before anything
// is built: a law of cclab's with settings its parameters accept, or a
// congestion control of the kernel without settings.
func CheckLaw(name string, settings []string) error {
	if l, err := law.ParseLaw(name); err == nil {
		// The law table's checks, in user space.
		ss, err := law.ParseAssignments(settings)
		if err == nil {
			err = ss.Check([]law.Law{l})
		}
		if err != nil {
			return fmt.Errorf("--cc %s: %w", name, err)
		}
		return nil
	}
	if len(settings) > 0 {
		return fmt.Errorf("--cc %s: settings %v are for cclab's laws (%s)", name, settings, strings.Join(lawload.Laws(), ", "))
	}
	avail, err := readAvailable()
	if err != nil {
		return err
	}
	if !slices.Contains(avail, name) {
		return fmt.Errorf("--cc %s: neither one of cclab's laws (%s) nor a congestion control this kernel has (%s)",
			name, strings.Join(lawload.Laws(), ", "), strings.Join(avail, ", "))
	}
	return nil
}

func readAvailable() ([]string, error) {
	data, err := readFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil, fmt.Errorf("congestion controls of this kernel: %w", err)
	}
	return strings.Fields(data), nil
}

// RegisterLaw gives every host of a live network law as its default
// congestion control. A law of cclab's is first registered with the
// parameters the calibration of this network derives (docs/calibration.md),
// the user's settings pinned; the supervisor must be serving the network
// (the calibration measures its paths).
func RegisterLaw(ctx context.Context, n *netbuild.Network, name string, settings []string, log io.Writer) (*Law, error) {
	out := &Law{Name: name}
	if slices.Contains(lawload.Laws(), name) {
		hosts := map[string]flows.Host{}
		for _, h := range n.Plan.Hosts() {
			hosts[h.Name] = flows.Host{Netns: n.Netns(h.Name), Addr: h.Addr}
		}
		res, err := calibrate.Run(ctx, n.Plan, calibrate.Options{Hosts: hosts, Log: log})
		if err != nil {
			return nil, fmt.Errorf("calibrate for %s: %w", name, err)
		}
		pinned, err := law.ParseAssignments(settings)
		if err != nil {
			return nil, fmt.Errorf("--cc %s: %w", name, err)
		}
		d, err := calibrate.Derive(res, n.Plan, []string{name}, pinned)
		if err != nil {
			return nil, fmt.Errorf("derive %s's parameters: %w", name, err)
		}
		out.Calibration, out.Derived = res, d
		out.Settings = append(pinned.Strings(), d.Settings()...)
		if _, err := lawload.Reconcile(ctx, []string{name}, out.Settings, lawload.Options{}); err != nil {
			return nil, fmt.Errorf("register %s: %w", name, err)
		}
		if err := calibrate.SetPathHops(n.Plan, lawload.Options{}); err != nil {
			return nil, err
		}
		// The supervisor claims the registration while the topology is
		// up: nobody changes its parameters under the hosts' flows.
		c, err := Dial(ctx, n.ID)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		if err := c.Claim(ctx, name); err != nil {
			return nil, err
		}
	}
	for _, h := range n.Plan.Hosts() {
		err := nsexec.Do(n.Netns(h.Name), func() error {
			return writeFile("/proc/sys/net/ipv4/tcp_congestion_control", name)
		})
		if err != nil {
			return nil, fmt.Errorf("default congestion control of %s: %w", h.Name, err)
		}
	}
	return out, nil
}
