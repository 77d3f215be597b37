#!/usr/bin/env bash
# Builds the Debian package with cargo-deb and checks it: unpacked into a
# throwaway root with `dpkg -x`, the binary runs, and the man page,
# completions, units and config are where Debian expects them. Prints the
# .deb's path. CI runs it; needs cargo-deb (installed when missing).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo-deb >/dev/null 2>&1 || cargo install cargo-deb --locked --quiet
cargo build --release --locked -p tachyon
dist=target/release/dist
mkdir -p "$dist"
bin=target/release/tachyon
"$bin" --generate man | gzip -9n >"$dist/tachyon.1.gz"
"$bin" --generate bash >"$dist/tachyon.bash"
"$bin" --generate zsh >"$dist/_tachyon"
"$bin" --generate fish >"$dist/tachyon.fish"
deb=$(cargo deb -p tachyon --no-build --locked --quiet --output target/debian/ | tail -1)
test -f "$deb"

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
dpkg -x "$deb" "$root"
fail() { echo "deb check: $*" >&2; exit 1; }
for f in usr/bin/tachyon usr/share/man/man1/tachyon.1.gz usr/share/bash-completion/completions/tachyon \
    usr/share/zsh/vendor-completions/_tachyon usr/share/fish/vendor_completions.d/tachyon.fish \
    lib/systemd/system/tachyon.service lib/systemd/system/tachyon.socket \
    lib/systemd/system/tachyon-https.socket etc/tachyon/tachyon.toml \
    usr/share/doc/tachyon/tachyon.example.toml usr/share/doc/tachyon/copyright; do
    test -e "$root/$f" || fail "missing /$f"
done
"$root/usr/bin/tachyon" --version | grep -q '^tachyon ' || fail "the binary does not run"
zcat "$root/usr/share/man/man1/tachyon.1.gz" | grep -qF 'no\-sandbox' || fail "the man page misses options"
grep -q -- '--access-log' "$root/usr/share/bash-completion/completions/tachyon" || fail "bash completion misses options"
dpkg-deb --field "$deb" Depends | grep -q libc6 || fail "no libc6 dependency"
dpkg-deb --field "$deb" Conffiles 2>/dev/null | grep -q /etc/tachyon/tachyon.toml ||
    dpkg-deb -I "$deb" conffiles | grep -q /etc/tachyon/tachyon.toml || fail "the config is not a conffile"
# The packaged config is valid for the packaged binary (its root is made here).
mkdir -p "$root/srv/www"
sed "s|/srv/www|$root/srv/www|; s|/var/log/tachyon/|$root/|" "$root/etc/tachyon/tachyon.toml" >"$root/check.toml"
"$root/usr/bin/tachyon" --check -c "$root/check.toml" >/dev/null || fail "the packaged config does not check"
echo "$deb"
