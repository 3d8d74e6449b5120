#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Provisions the cclab VM (Debian 12): the running kernel's headers, the
# laws' kernel modules built and loaded, cclab built, and the smoke test.
# Runs as root from `vagrant up` / `vagrant provision`; idempotent.
set -euo pipefail

repo=/vagrant
export DEBIAN_FRONTEND=noninteractive

if [ "${CCLAB_KERNEL:-stable}" = backports ] && ! uname -r | grep -q '^6\.12'; then
	echo "provision: installing the 6.12 kernel from bookworm-backports; reboot, then provision again"
	echo "deb http://deb.debian.org/debian bookworm-backports main" >/etc/apt/sources.list.d/backports.list
	apt-get update -qq
	apt-get install -y -qq -t bookworm-backports linux-image-amd64 linux-headers-amd64 >/dev/null
	echo "provision: run 'vagrant reload --provision'"
	exit 0
fi

echo "provision: headers for $(uname -r), build tools"
apt-get update -qq
apt-get install -y -qq --no-install-recommends "linux-headers-$(uname -r)" make gcc-12 \
	ca-certificates curl >/dev/null

# Go at the version go.mod asks for (Debian 12's is too old).
gover=$(awk '/^go / { print $2; exit }' "$repo/go.mod")
if ! /usr/local/go/bin/go version 2>/dev/null | grep -q "go$gover"; then
	echo "provision: Go $gover"
	curl -fsSL "https://go.dev/dl/go$gover.linux-amd64.tar.gz" -o /tmp/go.tgz
	rm -rf /usr/local/go && tar -C /usr/local -xzf /tmp/go.tgz && rm /tmp/go.tgz
fi
export PATH=$PATH:/usr/local/go/bin

echo "provision: the law modules"
make -C "$repo/kmod" modules
for m in cclab_int tcp_powertcp tcp_theta_powertcp tcp_hpcc tcp_swift; do
	[ -e "/sys/module/$m" ] && rmmod "$m"
done
insmod "$repo/kmod/cclab_int.ko"
for l in powertcp theta_powertcp hpcc swift; do insmod "$repo/kmod/tcp_$l.ko"; done
modprobe tcp_dctcp
modprobe sch_netem
echo "provision: congestion control available: $(cat /proc/sys/net/ipv4/tcp_available_congestion_control)"

echo "provision: cclab (scripts/bootstrap installs the rest)"
cd "$repo"
make bootstrap build

# The smoke test: the experiments' smallest run if the tree has one, else
# a flow per law over a netns pair with netem delay.
if [ -f experiments/smoke.yaml ]; then
	bin/cclab run experiments/smoke.yaml
else
	ip netns add cclab-vag-a && ip netns add cclab-vag-b
	trap 'ip netns del cclab-vag-a; ip netns del cclab-vag-b' EXIT
	ip link add va netns cclab-vag-a type veth peer name vb netns cclab-vag-b
	ip -n cclab-vag-a addr add 10.9.0.1/24 dev va && ip -n cclab-vag-a link set va up
	ip -n cclab-vag-b addr add 10.9.0.2/24 dev vb && ip -n cclab-vag-b link set vb up
	tc -n cclab-vag-a qdisc add dev va root netem delay 1ms rate 100mbit
	for l in powertcp theta_powertcp hpcc swift dctcp; do
		ip netns exec cclab-vag-b iperf3 -s -1 -D
		sleep 0.5
		ip netns exec cclab-vag-a iperf3 -c 10.9.0.2 -C "$l" -t 2 | grep -E 'sender|receiver'
	done
fi
echo "provision: done"
