// Package live keeps a topology brought up by `cclab topo up` working
// between commands: a supervisor process (Serve) serves its delay line,
// holds the INT switch on every switch port and the host agent on the
// run's cgroup, and answers a control socket in the run's state
// directory (status, link changes). Start spawns the supervisor from the
// command that built the network and waits until it is ready; Dial talks
// to it. The supervisor is recorded among the run's processes, so that
// `cclab topo down` and `cclab clean` stop it like anything else the run
// started.
package live
