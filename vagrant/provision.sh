#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Provisions the cclab VM (Debian 12): the running kernel's headers and the
# build tools (only what is missing: cclab's box has them all), the laws'
# kernel modules built and installed with DKMS and loaded, cclab (prebuilt
# by the host, or built here), and the VM's experiment
# (vagrant/experiment.yaml) with its analysis into /vagrant/results/vagrant.
# Runs as root from `vagrant up` / `vagrant provision`; idempotent.
set -euo pipefail

repo=/vagrant
export DEBIAN_FRONTEND=noninteractive
step() { echo "provision: $*"; }

if [ "${CCLAB_KERNEL:-stable}" = backports ] && ! uname -r | grep -q '^6\.12'; then
	step "installing the 6.12 kernel from bookworm-backports; reboot, then provision again"
	echo "deb http://deb.debian.org/debian bookworm-backports main" >/etc/apt/sources.list.d/backports.list
	apt-get update -qq
	apt-get install -y -qq -t bookworm-backports linux-image-amd64 linux-headers-amd64 >/dev/null
	step "run 'vagrant reload --provision'"
	exit 0
fi

# ---- packages: only what is missing ----
want=("linux-headers-$(uname -r)" dkms make gcc-12 iproute2 iperf3 ethtool kmod rsync)
missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	step "installing ${missing[*]}"
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- the law modules, with DKMS ----
# dkms.conf wants kmod/ and tcopt/ side by side under /usr/src/cclab-0.1.
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$repo/kmod/dkms.conf")
src=/usr/src/cclab-$ver
step "DKMS: cclab/$ver for $(uname -r)"
mkdir -p "$src"
rsync -a --delete --exclude '*.go' --exclude '*_bpfel.*' --exclude testdata \
	--exclude '*.o' --exclude '*.ko' --exclude '*.mod*' --exclude '.*.cmd' \
	"$repo/kmod" "$repo/tcopt" "$src/"
cp "$repo/kmod/dkms.conf" "$src/dkms.conf"
# Built again only when the sources changed (a checksum of the tree).
sum=$(cd "$src" && find . -type f ! -name .sum -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ "$(cat "$src/.sum" 2>/dev/null)" = "$sum" ] &&
	dkms status "cclab/$ver" -k "$(uname -r)" 2>/dev/null | grep -q installed; then
	step "DKMS: the installed modules are of these sources"
else
	if dkms status "cclab/$ver" 2>/dev/null | grep -q .; then
		dkms remove "cclab/$ver" --all >/dev/null
	fi
	t0=$(date +%s)
	dkms add "cclab/$ver" >/dev/null
	dkms install "cclab/$ver" -k "$(uname -r)" >/tmp/dkms.log 2>&1 || {
		tail -30 /tmp/dkms.log
		tail -30 "/var/lib/dkms/cclab/$ver/build/make.log" 2>/dev/null
		exit 1
	}
	echo "$sum" >"$src/.sum"
	step "DKMS built and installed the modules in $(($(date +%s) - t0)) s"
fi
step "$(dkms status "cclab/$ver")"

laws=$("$repo/scripts/laws" module) # cclab's law modules (the law table)
for l in $laws; do
	if [ -e "/sys/module/tcp_$l" ]; then rmmod "tcp_$l"; fi
done
if [ -e /sys/module/cclab_int ]; then rmmod cclab_int; fi
modprobe cclab_int
for l in $laws; do modprobe "tcp_$l"; done
# DCTCP is Debian's own module (kmod/ has none; cclab's eBPF build needs
# a newer kernel's struct_ops): `cclab run` uses it as it is.
modprobe tcp_dctcp
modprobe sch_netem
step "congestion control available: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"

# ---- cclab ----
mkdir -p "$repo/bin"
if [ -n "${CCLAB_PREBUILT:-}" ] && [ -x "$CCLAB_PREBUILT/bin/cclab" ]; then
	step "cclab: the host's build ($CCLAB_PREBUILT/bin/cclab)"
	install -m 0755 "$CCLAB_PREBUILT/bin/cclab" "$repo/bin/cclab"
	echo "cclab: the host's build" >/var/lib/cclab-build
elif [ -n "${CCLAB_GOROOT:-}" ] && [ -x "$CCLAB_GOROOT/bin/go" ] && [ -f "${CCLAB_VENDOR:-}/modules.txt" ]; then
	# Offline: the host's Go and the vendored modules; the BPF objects and
	# their bindings are committed, so neither clang nor vmlinux.h is
	# needed. The build cache persists for the next provisioning.
	step "cclab: go build in the guest ($("$CCLAB_GOROOT/bin/go" version | awk '{ print $3 }'), offline)"
	rm -rf "$repo/vendor" && cp -a "$CCLAB_VENDOR" "$repo/vendor"
	t0=$(date +%s)
	# The law core is cgo (kmod/law): the C compiler DKMS uses.
	cc=$(command -v gcc || command -v gcc-12)
	(cd "$repo" && CC=$cc GOROOT="$CCLAB_GOROOT" GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local \
		GOCACHE=/var/cache/cclab-go-build "$CCLAB_GOROOT/bin/go" build -o bin/cclab ./cmd/cclab)
	rm -rf "$repo/vendor"
	echo "cclab: built in the guest by $("$CCLAB_GOROOT/bin/go" version | awk '{ print $3 }') in $(($(date +%s) - t0)) s" |
		tee /var/lib/cclab-build
else
	# Go at the version go.mod asks for (Debian 12's is too old), and the
	# tools `make build` needs (scripts/bootstrap).
	gover=$(awk '/^go / { print $2; exit }' "$repo/go.mod")
	if ! /usr/local/go/bin/go version 2>/dev/null | grep -q "go$gover"; then
		step "Go $gover"
		curl -fsSL "https://go.dev/dl/go$gover.linux-amd64.tar.gz" -o /tmp/go.tgz
		rm -rf /usr/local/go && tar -C /usr/local -xzf /tmp/go.tgz && rm /tmp/go.tgz
	fi
	export PATH=$PATH:/usr/local/go/bin
	step "cclab: make bootstrap build"
	make -C "$repo" bootstrap build
	echo "cclab: built in the guest by make bootstrap build" >/var/lib/cclab-build
fi
install -m 0755 "$repo/bin/cclab" /usr/local/bin/cclab
mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

# ---- the experiment, with the modules ----
out=$repo/results
rm -rf "$out/vagrant"
step "cclab run vagrant/experiment.yaml"
t0=$(date +%s)
cclab run "$repo/vagrant/experiment.yaml" --out "$out" --run vagrant --replace
step "cclab analyze"
cclab analyze "$out/vagrant"
step "experiment and analysis took $(($(date +%s) - t0)) s; results in $out/vagrant"
step "done"
