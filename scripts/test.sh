#!/usr/bin/env bash
# Every test, on a fresh Debian machine with only a Rust toolchain: installs
# the real clients the end-to-end specs talk to (curl, ApacheBench, wrk,
# headless Chromium, openssl s_client, testssl.sh, promtool,
# systemd-socket-activate, nghttp and h2load, ss, prlimit, Debian's Python
# documentation (a real site), h2spec from the Go module proxy, and for
# HTTP/3 aioquic from PyPI and ngtcp2's client, for ACME Let's Encrypt's
# test CA, pebble, with its DNS, and for compression dictionaries the zstd
# program and a real library, Debian's jQuery) when they are missing, then
# runs the whole workspace's tests. `.ci/run` calls exactly this. Extra arguments go to
# `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in curl:curl ab:apache2-utils wrk:wrk chromium-headless-shell:chromium-headless-shell \
    openssl:openssl testssl:testssl.sh promtool:prometheus \
    systemd-socket-activate:systemd nghttp:nghttp2-client h2load:nghttp2-client ss:iproute2 \
    go:golang-go prlimit:util-linux /usr/share/doc/python3/html/index.html:python3-doc \
    pip3:python3-pip gtlsclient:ngtcp2-client pebble:pebble pebble-challtestsrv:pebble \
    zstd:zstd /usr/share/javascript/jquery/jquery.min.js:libjs-jquery; do
    # A command on PATH, or a file a package installs.
    command -v "${tool%%:*}" >/dev/null 2>&1 || [ -e "${tool%%:*}" ] || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
    echo "installing the test clients: ${need[*]}" >&2
    sudo=""
    if [ "$(id -u)" != 0 ]; then
        command -v sudo >/dev/null 2>&1 || {
            echo "missing ${need[*]}: run as root, or apt-get install -y ${need[*]}" >&2
            exit 1
        }
        sudo="sudo"
    fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi

# h2spec, the HTTP/2 conformance suite (its Go module, built here).
if ! command -v h2spec >/dev/null 2>&1 && [ ! -x "${GOPATH:-$HOME/go}/bin/h2spec" ]; then
    echo "installing h2spec (go install)" >&2
    go install github.com/summerwind/h2spec/cmd/h2spec@latest
fi

# aioquic, the HTTP/3 client of the specs (PyPI; Debian does not package it).
if ! python3 -c 'import aioquic' >/dev/null 2>&1; then
    echo "installing aioquic (pip)" >&2
    python3 -m pip install --quiet --user aioquic 2>/dev/null ||
        python3 -m pip install --quiet --user --break-system-packages aioquic
fi

cargo test --workspace --locked "$@"
