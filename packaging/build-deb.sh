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
bin=$(swift build -c release --show-bin-path)
version=$("$bin/cog-cred-cli" --version)   # the one source: Sources/CogCredWrite/Version.swift
arch=$(dpkg --print-architecture)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/cog-cred_${version}_${arch}"
make --no-print-directory install DESTDIR="$root" PREFIX=/usr >/dev/null
strip --strip-unneeded --remove-section=.comment "$root/usr/bin/cog-cred" "$root/usr/lib/cog-cred/cog-cred-cli"
# Man pages compressed (policy 12.1); the links (the helper names) then
# name the compressed page.
for page in "$root"/usr/share/man/man1/*.1; do
    if [ -L "$page" ]; then
        ln -s "$(readlink "$page").gz" "$page.gz"
        rm "$page"
    else
        gzip -9n "$page"
    fi
done
# Debian policy 12.5: the licence, machine-readable (copyright-format 1.0);
# 12.7: the changelog, in Debian's format (a native package: changelog.gz).
install -m 0644 packaging/copyright "$root/usr/share/doc/cog-cred/copyright"
gzip -9nc packaging/changelog > "$root/usr/share/doc/cog-cred/changelog.gz"
install -D -m 0644 packaging/lintian-overrides "$root/usr/share/lintian/overrides/cog-cred"

# The front is linked statically (docs/performance.md says why): name the
# source packages whose static libraries scripts/build's link took in, at
# the versions it took, so that a security update of glibc, dbus or json-c
# shows the package is due a rebuild (Static-Built-Using). glibc is LGPL:
# Built-Using keeps its source in the archive while this binary is.
# (Swift's own Unicode tables come with the toolchain, not from Debian.)
static_sources=$(
    while read -r file; do
        # Not from a Debian package (Swift's toolchain under /opt): skipped.
        owner=$(dpkg -S "$(readlink -f "$file")" 2>/dev/null | cut -d: -f1) || continue
        dpkg-query -W -f='${source:Package} (= ${source:Version})\n' "$owner"
    done < <(grep '^/' .build/front/linked-files) | LC_ALL=C sort -u | paste -sd, | sed 's/,/, /g')
[ -n "$static_sources" ] || { echo "build-deb.sh: no Debian package owns the front's static libraries" >&2; exit 1; }
lgpl_sources=$(tr ',' '\n' <<<"$static_sources" | sed 's/^ //' | grep '^glibc ' | paste -sd, | sed 's/,/, /g')

# dpkg-shlibdeps wants a source package around the binaries.
mkdir -p "$work/debian"
printf 'Source: cog-cred\n\nPackage: cog-cred\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "$root/usr/bin/cog-cred" "$root/usr/lib/cog-cred/cog-cred-cli" 2>/dev/null |
    sed -n 's/^shlibs:Depends=//p')
# cog-cred-cli loads libcurl, libsecret, libfido2 and libmicrohttpd by
# dlopen (Sources/CCurl, Sources/CSecret, Sources/CFido2, Sources/CMicroHTTPD:
# not at start-up; libfido2 only for a passkey, libmicrohttpd only for
# `proxy`), so dpkg-shlibdeps cannot see them: each one's dependency is read
# from the shlibs file dpkg-shlibdeps would have used, for the SONAME the C
# file loads.
for loader in Sources/CCurl/ccurl.c Sources/CSecret/csecret.c Sources/CFido2/cfido2.c Sources/CMicroHTTPD/cmhd.c; do
    loaded=$(sed -n 's/^#define LIBRARY "\(.*\)"$/\1/p' "$loader")
    # awk reads to the end: an early exit would end ldconfig with SIGPIPE (pipefail).
    loaded_path=$(ldconfig -p | awk -v so="$loaded" '!found && $1 == so { print $NF; found = 1 }')
    loaded_owner=$(dpkg -S "$(readlink -f "$loaded_path")" | cut -d: -f1)
    loaded_depends=$(dpkg-query --control-show "$loaded_owner" shlibs |
        awk -v name="${loaded%.so.*}" -v version="${loaded##*.so.}" '!found && $1 == name && $2 == version { $1 = $2 = ""; sub(/^ +/, ""); print; found = 1 }')
    [ -n "$loaded_depends" ] || { echo "build-deb.sh: no shlibs entry for $loaded (from $loaded_owner)" >&2; exit 1; }
    depends="$depends, $loaded_depends"
done

# Recommends: a Secret Service to keep the tokens in. Suggests: qrencode
# draws the authenticator set-up as a QR code; secret-tool reads the items.
mkdir -p "$root/DEBIAN"
cat > "$root/DEBIAN/control" <<CONTROL
Package: cog-cred
Version: $version
Architecture: $arch
Maintainer: cog-cred developers <cog-cred@users.noreply.example>
Depends: $depends
Built-Using: $lgpl_sources
Static-Built-Using: $static_sources
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

(cd "$root" && find usr -type f -print0 | LC_ALL=C sort -z | xargs -0 md5sum) > "$root/DEBIAN/md5sums"

mkdir -p dist
dpkg-deb --root-owner-group --build "$root" "dist/cog-cred_${version}_${arch}.deb" >/dev/null
echo "dist/cog-cred_${version}_${arch}.deb"
