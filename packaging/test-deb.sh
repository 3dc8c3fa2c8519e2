#!/usr/bin/env bash
# packaging/test-deb.sh: builds the .deb and checks it the way a user meets it:
# its metadata, apt's view of its Depends, and the binaries run from the
# unpacked tree (version, help, the exit status without a profile, the git
# helper name, completions); then make install / make uninstall.
set -uo pipefail
cd "$(dirname "$0")/.."

passed=0
failed=0
check() {  # check "what" command...
    local what=$1
    shift
    if "$@" >/dev/null 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $what" >&2; fi
}

deb=$(packaging/build-deb.sh) || { echo "build-deb.sh failed" >&2; exit 1; }
version=$(dpkg-deb -f "$deb" Version)
depends=$(dpkg-deb -f "$deb" Depends)
recommends=$(dpkg-deb -f "$deb" Recommends)
suggests=$(dpkg-deb -f "$deb" Suggests)
contents=$(dpkg-deb -c "$deb")
root=$(mktemp -d)
home=$(mktemp -d)
prefix=$(mktemp -d)
trap 'rm -rf "$root" "$home" "$prefix"' EXIT
dpkg-deb -x "$deb" "$root"

check "the version is the program's" test "$version" = "$("$root/usr/bin/cog-cred" --version)"
check "Depends names libdbus" grep -q "libdbus-1-3" <<<"$depends"
check "Depends names json-c" grep -q "libjson-c5" <<<"$depends"
check "Depends names libsecret (cog-cred-cli's writes and prompts)" grep -q "libsecret-1-0" <<<"$depends"
check "Depends names libcurl" grep -q "libcurl4" <<<"$depends"
check "Depends names libfido2 (cog-cred-cli's security keys, for passkeys)" grep -q "libfido2-1" <<<"$depends"
check "Depends names libmicrohttpd (cog-cred proxy's server)" grep -q "libmicrohttpd12" <<<"$depends"
check "Depends names no build tools" bash -c "! grep -qE -- '-dev|swift|gcc |clang' <<<'$depends'"
check "Recommends a Secret Service" grep -qx "gnome-keyring | keepassxc" <<<"$recommends"
check "Suggests qrencode and secret-tool" grep -qx "qrencode, libsecret-tools" <<<"$suggests"
check "the copyright file is in the package, mode 0644" grep -qE '^-rw-r--r-- root/root .* \./usr/share/doc/cog-cred/copyright$' <<<"$contents"
check "the copyright file is machine-readable, Apache-2.0" bash -c "grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' '$root/usr/share/doc/cog-cred/copyright' && grep -qx 'License: Apache-2.0' '$root/usr/share/doc/cog-cred/copyright'"
check "the changelog is Debian's, its newest entry this version" bash -c "test \"\$(zcat '$root/usr/share/doc/cog-cred/changelog.gz' | dpkg-parsechangelog -l - -S Version)\" = '$version'"
# The static front: every library it took in statically, at the version it was built with.
static=$(dpkg-deb -f "$deb" Static-Built-Using)
for dev in libc6-dev libdbus-1-dev libjson-c-dev; do
    source=$(dpkg-query -W -f='${source:Package} (= ${source:Version})' "$dev")
    check "Static-Built-Using names $source" grep -qF "$source" <<<"$static"
done
check "Built-Using names glibc (LGPL)" grep -q "^glibc (= " <<<"$(dpkg-deb -f "$deb" Built-Using)"
# Errors and warnings count unless overridden, each override with its reason.
check "lintian: no error or warning" lintian --fail-on error,warning "$deb"
check "every lintian override comes after a comment saying why" awk '/^#/ { why = 1; next } /^$/ { why = 0; next } { if (!why) bad = 1; why = 0 } END { exit bad }' packaging/lintian-overrides
for helper in git-credential docker-credential; do
    check "man $helper-cog-cred opens cog-cred-$helper(1)" test "$(readlink "$root/usr/share/man/man1/$helper-cog-cred.1.gz")" = "cog-cred-$helper.1.gz"
done
check "the bash completion has no hashbang" bash -c "! head -n1 '$root/usr/share/bash-completion/completions/cog-cred' | grep -q '^#!'"
check "apt can satisfy Depends" apt-get install --simulate --no-install-recommends "./$deb"
check "the Swift runtime is linked in, not needed from the system" bash -c "! ldd '$root/usr/bin/cog-cred' '$root/usr/lib/cog-cred/cog-cred-cli' | grep -q libswift"
check "--help works" "$root/usr/bin/cog-cred" --help
check "status without a profile exits 78" bash -c "HOME=$home XDG_CONFIG_HOME= '$root/usr/bin/cog-cred' status; test \$? -eq 78"
check "the git helper name answers" bash -c "'$root/usr/bin/git-credential-cog-cred' capability | grep -q 'capability authtype'"
check "the docker helper name answers" bash -c "'$root/usr/bin/docker-credential-cog-cred' version | grep -q '^cog-cred '"
check "bash completion lists commands" grep -q "sign-in" "$root/usr/share/bash-completion/completions/cog-cred"
check "zsh completion exists" test -s "$root/usr/share/zsh/vendor-completions/_cog-cred"
check "fish completion exists" test -s "$root/usr/share/fish/vendor_completions.d/cog-cred.fish"
check "the man page renders" bash -c "man -l '$root/usr/share/man/man1/cog-cred.1.gz' | grep -q 'SECRET SERVICE ATTRIBUTES'"
check "the man page has the hand-written exit statuses" bash -c "MANWIDTH=400 man -l '$root/usr/share/man/man1/cog-cred.1.gz' | grep -q 'including a config file others can write'"
check "docs are installed" test -s "$root/usr/share/doc/cog-cred/security.md"
# The man pages, one per command (git's names), each as its two renderers
# see it. mandoc's lint also checks the SEE ALSO pages against this
# machine's mandoc.db, and says "outdated mandoc.db lacks secret-tool(1)
# entry" when the database predates packages installed since (run
# makewhatis): a statement about the machine, not about a page, so those
# lines are left out and every other one counts. The pages are linted in
# their own directory, where mandoc finds the pages they refer to.
man_dir=$(mktemp -d)
man1="$root/usr/share/man/man1"
pages=$(cd "$man1" && find . -type f -name '*.1.gz' -printf '%f\n' | LC_ALL=C sort)
check "a page for a command, named as git names its own" test -s "$man1/cog-cred-sign-in.1.gz"
check "a page for a nested command" test -s "$man1/cog-cred-mfa-enable.1.gz"
check "no page under the plugin's dotted names, none for help" bash -c "! grep -qE '^cog-cred[.][a-z]|^cog-cred-help[.]' <<<'$pages'"
# The commands the plugin renders, each by its page's name (help aside).
expected=$(HOME=$home "$root/usr/lib/cog-cred/cog-cred-cli" --experimental-dump-help | python3 -c '
import json, sys
def pages(command, words):
    yield "-".join(["cog-cred"] + words) + ".1.gz"
    for sub in command.get("subcommands", []):
        if sub["commandName"] != "help":
            yield from pages(sub, words + [sub["commandName"]])
print("\n".join(pages(json.load(sys.stdin)["command"], [])))' | LC_ALL=C sort)
check "one page per command, and the root's" test "$expected" = "$pages"
for page in $pages; do
    name=${page%.1.gz}
    gunzip -c "$man1/$page" > "$man_dir/$name.1"
    MANWIDTH=80 man -l "$man_dir/$name.1" 2>/dev/null | sed 's/.\x08//g' > "$man_dir/$name.txt"
    check "$name: groff -ww -man reports nothing" test -z "$(groff -ww -man -z "$man_dir/$name.1" 2>&1)"
    # (groff shortens a long title in the header: the title is checked in the source.)
    check "$name: the title is the page's name" grep -qx "\.Dt ${name^^} 1" "$man_dir/$name.1"
    title=${name^^}
    check "$name: the header is cog-cred's, not BSD's" grep -qE "^${title:0:20}.* General Commands Manual " <(head -n1 "$man_dir/$name.txt")
    check "$name: the footer names cog-cred and its version" grep -q "^cog-cred $version " <(tail -n1 "$man_dir/$name.txt")
    check "$name: each section once" test -z "$(grep '^\.Sh' "$man_dir/$name.1" | sort | uniq -d)"
    check "$name: EXAMPLES of cog-cred lines" bash -c "sed -n '/^EXAMPLES\$/,/^[A-Z]/p' '$man_dir/$name.txt' | grep -q '^ *cog-cred '"
    [ "$name" = cog-cred ] || check "$name: SEE ALSO names cog-cred(1)" bash -c "sed -n '/^SEE ALSO\$/,\$p' '$man_dir/$name.txt' | grep -q 'cog-cred(1)'"
done
check "mandoc -T lint reports nothing" test -z "$(cd "$man_dir" && mandoc -T lint ./*.1 2>&1 | grep -v '^mandoc: outdated mandoc.db lacks ')"
check "the root page lists the command pages" grep -q "cog-cred-sign-in(1)" "$man_dir/cog-cred.txt"
# The root page lists the global options (--profile, --debug) and no
# command's own: the one page of old listed every command's options.
check "the root page lists no command's options" bash -c "! grep -qE '^ *--(password-stdin|min-ttl|format)' '$man_dir/cog-cred.txt'"
check "the root page lists the global options" bash -c "grep -qE '^ *-p, --profile name' '$man_dir/cog-cred.txt' && grep -qE '^ *--debug' '$man_dir/cog-cred.txt'"
check "the sign-in page lists its options" grep -qx " *-p, --profile name" "$man_dir/cog-cred-sign-in.txt"
check "the git helper's page carries its helper name" grep -q "git-credential-cog-cred" <(sed -n '/^NAME$/,/^SYNOPSIS$/p' "$man_dir/cog-cred-git-credential.txt")
check "the token page states when a stored token is handed out" bash -c "MANWIDTH=400 man -l '$man_dir/cog-cred-token.1' 2>/dev/null | grep -q 'an expired token is never printed'"
check "EXAMPLES lines are intact" grep -qxF '           curl -H "$(cog-cred get-header)" https://api.example.com/things' "$man_dir/cog-cred.txt"
rm -rf "$man_dir"

check "make install" make install --no-print-directory PREFIX="$prefix"
check "installed cog-cred runs" "$prefix/bin/cog-cred" --version
check "make uninstall" make --no-print-directory uninstall PREFIX="$prefix"
check "make uninstall leaves no file" test -z "$(find "$prefix" -type f -o -type l)"

echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
