#!/usr/bin/env bash
# packaging/test-deb-bookworm.sh: installs the .deb with apt into a clean
# Debian bookworm root made by debootstrap (from this machine's own Debian
# mirror), and runs it there as a user would: --version, --help, and status
# without a profile (exit 78). Needs root.
#
# debootstrap costs a minute of CPU (dpkg unpacks and configures about 100
# packages), so the root it makes is kept, untouched, as a tarball beside
# the project's venv (~/.cache/cog-cred, or $COG_CRED_CACHE) for a week.
# Each run unpacks a fresh copy and refreshes apt's lists in it, so the
# .deb's dependencies resolve against bookworm as the mirror has it today.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v debootstrap >/dev/null || apt-get install -y -qq debootstrap >/dev/null
deb=$(ls dist/cog-cred_*.deb 2>/dev/null | tail -1)
[ -n "$deb" ] || deb=$(packaging/build-deb.sh)
# The mirror apt already uses here; no host is named in this repository.
mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list)

root=$(mktemp -d)
cleanup() { umount "$root/proc" 2>/dev/null || true; rm -rf "$root"; }
trap cleanup EXIT
# One tarball per mirror: the root's sources name it.
cache=${COG_CRED_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/cog-cred}
tarball=$cache/bookworm-minbase-$(printf %s "$mirror" | sha256sum | cut -c1-12).tar
if [ -s "$tarball" ] && [ -z "$(find "$tarball" -mtime +6)" ]; then
    tar -C "$root" --numeric-owner -xpf "$tarball"
    chroot "$root" apt-get update -qq >/dev/null
else
    debootstrap --variant=minbase bookworm "$root" "$mirror" >/dev/null
    mkdir -p "$cache"
    tar -C "$root" --numeric-owner -cf "$tarball.partial" .
    mv "$tarball.partial" "$tarball"
fi
mount -t proc proc "$root/proc"
cp "$deb" "$root/tmp/cog-cred.deb"
# Depends only: what the package cannot run without (Recommends would pull
# gnome-keyring and systemd into the minimal root).
chroot "$root" apt-get install -y -qq --no-install-recommends /tmp/cog-cred.deb >/dev/null

fail=0
expect() {  # expect CODE what command...
    local code=$1 what=$2
    shift 2
    set +e
    chroot "$root" env -i PATH=/usr/bin:/bin HOME=/root "$@" >/dev/null 2>"$root/tmp/stderr"
    local got=$?
    set -e
    if [ "$got" -eq "$code" ]; then echo "ok: $what"; else echo "FAILED: $what (exit $got, wanted $code): $(head -c 300 "$root/tmp/stderr")"; fail=1; fi
}
expect 0 "cog-cred --version" cog-cred --version
expect 0 "cog-cred --help" cog-cred --help
expect 78 "cog-cred status without a profile" cog-cred status
expect 0 "git-credential-cog-cred capability" git-credential-cog-cred capability
expect 0 "man page installed" test -s /usr/share/man/man1/cog-cred.1.gz
expect 0 "a command's man page installed" test -s /usr/share/man/man1/cog-cred-sign-in.1.gz
expect 0 "the git helper's man page" test -s /usr/share/man/man1/git-credential-cog-cred.1.gz
exit $fail
