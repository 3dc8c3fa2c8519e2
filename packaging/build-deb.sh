#!/usr/bin/env bash
# packaging/build-deb.sh: builds the release binaries if needed and writes
# dist/cog-cred_<version>_<arch>.deb. Run from anywhere; no arguments.
#
# The layout is `make install PREFIX=/usr`; Depends is derived from the
# libraries the binaries actually link (dpkg-shlibdeps), never written by hand.
set -euo pipefail
cd "$(dirname "$0")/.."

command -v dpkg-shlibdeps >/dev/null || { sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo; $sudo apt-get install -y -qq dpkg-dev >/dev/null; }
scripts/build >/dev/null
bin=$(swift build -c release --static-swift-stdlib --show-bin-path)
version=$("$bin/cog-cred-cli" --version)   # the one source: Sources/CogCredCore/Support/Version.swift
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/cog-cred_${version}_${arch}"
make --no-print-directory install DESTDIR="$root" PREFIX=/usr >/dev/null
strip --strip-unneeded "$root/usr/bin/cog-cred" "$root/usr/lib/cog-cred/cog-cred-cli"
gzip -9n "$root/usr/share/man/man1/cog-cred.1"
# Debian policy 12.5: the licence, machine-readable (copyright-format 1.0).
install -m 0644 packaging/copyright "$root/usr/share/doc/cog-cred/copyright"

# dpkg-shlibdeps wants a source package around the binaries.
mkdir -p "$work/debian"
printf 'Source: cog-cred\n\nPackage: cog-cred\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "$root/usr/bin/cog-cred" "$root/usr/lib/cog-cred/cog-cred-cli" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')

# Recommends: a Secret Service to keep the tokens in. Suggests: qrencode
# draws the authenticator set-up as a QR code; secret-tool reads the items.
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: cog-cred
Version: $version
Architecture: $arch
Maintainer: cog-cred developers <cog-cred@users.noreply.example>
Depends: $depends
Recommends: gnome-keyring | keepassxc
Suggests: qrencode, libsecret-tools
Section: utils
Priority: optional
Installed-Size: $(du -sk "$root/usr" | cut -f1)
Description: Amazon Cognito tokens from the Secret Service for any tool
 Signs in to an Amazon Cognito user pool (SRP by default), keeps the access,
 ID and refresh tokens in the desktop keyring (gnome-keyring, KeePassXC,
 KWallet), refreshes them before they expire, and hands a valid token to
 curl, git, docker, kubectl or any command.
CONTROL

mkdir -p dist
dpkg-deb --root-owner-group --build "$root" "dist/cog-cred_${version}_${arch}.deb" >/dev/null
echo "dist/cog-cred_${version}_${arch}.deb"
