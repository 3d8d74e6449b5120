// Package vm tests cclab's kernel modules on Debian's own kernels under
// qemu: it fetches a kernel and its headers through apt (scripts/vm/
// fetch-kernel), builds the modules against those headers, packs an
// initramfs with the guest test (scripts/vm/make-initramfs), boots it and
// reads the guest's verdict from the serial console.
//
// Everything downloaded or built is cached under a cache directory
// (CacheDir) so that a second run boots within seconds of the build.
package vm
