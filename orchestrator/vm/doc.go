// Package vm tests cclab's kernel modules on Debian's own kernels under
// qemu, because the development machine's kernel cannot load modules.
//
// For each kernel series (6.1 from bookworm, 6.12 from bookworm-backports)
// Run:
//   - resolves the current linux-image-amd64 of the suite through apt on a
//     private state directory and downloads the image, headers, headers
//     -common and kbuild packages (scripts/vm/fetch-kernel; never
//     hard-coded versions);
//   - builds kmod/ against those headers with Debian's gcc-12;
//   - builds guestint (this directory) statically: cclab's own topology
//     builder, INT switch and INT host agent, for the guest;
//   - packs an initramfs of busybox, the host's ip/tc/ss/iperf3 with their
//     libraries, the distribution modules the test needs and the built .ko
//     files (scripts/vm/make-initramfs);
//   - boots it with qemu-system-x86_64 (-smp 2, 2 GB; KVM when /dev/kvm
//     runs a guest, else TCG) and reads the guest's report lines from the
//     serial console (result.go), with a timeout.
//
// The guest (scripts/vm/guest-init, scripts/vm/guest-test) loads the
// modules, checks parameter range enforcement, builds 1- and 3-switch
// paths with HTB and netem, runs a flow per law, checks that the window
// follows the law's signal (tracepoint cclab:cclab_cc_ack), that rmmod is
// refused while a socket uses a module and succeeds after, that every
// socket's state is freed, that real INT echoes reach the INT laws (the
// INT switch attaches with tcx on 6.12, with classic cls_bpf filters on
// 6.1), and that dmesg has no WARN, BUG or oops.
//
// Downloads and builds are cached under a cache directory (DefaultCache)
// and reused: kernels by version, module builds by a hash of the sources.
package vm
