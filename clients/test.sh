#!/bin/sh
# clients/test.sh: the Python and TypeScript client suites against a real
# lazymemd built from this checkout (`make test` runs it).
#
# Each suite needs a tool the Go toolchain does not bring: Debian's python3
# with pytest, PyYAML and venv for Python; Node.js 20+ and npm for
# TypeScript. Run by hand without one, that suite is skipped with a message;
# under CI=true (.ci/run installs both) a missing tool is a failure.
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

missing() {
	if [ "${CI:-}" = true ]; then
		echo "clients/test.sh: $1 (required under CI=true)" >&2
		exit 1
	fi
	echo "clients/test.sh: SKIP $2: $1" >&2
}

go build -o "$tmp/bin/" ./cmd/lazymemd
LAZYMEM_BIN="$tmp/bin/lazymemd"
export LAZYMEM_BIN

# Debian's python3 (a pyenv python3 earlier on PATH may lack venv's wheel).
py=/usr/bin/python3
[ -x "$py" ] || py=$(command -v python3 || true)
if [ -n "$py" ] && "$py" -c 'import pytest, yaml, venv' 2>/dev/null; then
	"$py" -m venv --system-site-packages "$tmp/venv"
	"$tmp/venv/bin/pip" install -q --no-build-isolation --no-index ./clients/python
	"$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider clients/python
else
	missing "python3 with pytest, yaml and venv not found (apt-get install python3-pytest python3-yaml python3-venv)" "the Python client suite"
fi

if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	(cd clients/typescript && npm ci --prefer-offline --no-audit --no-fund --silent &&
		npm run --silent check-types && npm test --silent && npm pack --dry-run --silent >/dev/null)
else
	missing "node and npm not found (apt-get install nodejs npm)" "the TypeScript client suite"
fi
