#!/bin/sh
# Installs the Debian packages LDS needs to build, test, benchmark and demo.
# Used by every make target that needs them; does nothing when all are present.
# Run as root on Debian 12; as another user it only reports what is missing.
set -eu

PKGS="build-essential pkg-config clang libconfig-dev check libsubunit-dev \
libssl-dev libopenmpi-dev openmpi-bin libibverbs-dev librdmacm-dev \
rdma-core ibverbs-utils iperf3 iproute2 gnuplot-nox jq procps python3-prometheus-client \
libudt-dev libisal-dev"
# Intel's ipsec-mb seals frames at four times OpenSSL's speed; Debian ships
# it for amd64 only, and ldsd builds with OpenSSL alone without it.
[ "$(dpkg --print-architecture 2>/dev/null)" = amd64 ] && PKGS="$PKGS libipsec-mb-dev"

missing=""
for p in $PKGS; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing="$missing $p"
	fi
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "install-deps: missing Debian packages:$missing" >&2
	echo "install-deps: run 'sudo tools/install-deps.sh' (or install them yourself) and retry" >&2
	exit 1
fi

echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q </dev/null
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing </dev/null
