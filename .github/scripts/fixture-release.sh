#!/usr/bin/env bash
# Build the golden fixture release of the installed kit: check the tree, pack the bundle, and
# prove with standard tools that it is the very bundle the package pins.
#
#   usage: fixture-release.sh OUT_DIR [TAG]      TAG, when given, must be v<kit version>
#
# Writes OUT_DIR/ticdc-conformance-fixtures-<version>.tar.gz and OUT_DIR/SHA256SUMS. The
# release workflow (.github/workflows/release.yml) runs it and attaches OUT_DIR/* to the
# release; tests/test_release.py runs it locally. PYTHON names the interpreter (default
# python3) that has the kit installed.
set -euo pipefail

out=${1:?usage: fixture-release.sh OUT_DIR [TAG]}
tag=${2:-}
python=${PYTHON:-python3}

kit() { "$python" -m ticdc_conformance.cli "$@"; }
version=$("$python" -c 'from ticdc_conformance.fixtures import kit_version; print(kit_version())')
pin=$("$python" -c 'from ticdc_conformance.fixtures import default_root; print(default_root() / "bundle.sha256")')

if [[ -n $tag && $tag != "v$version" ]]; then
    echo "error: the tag $tag does not name kit version $version (expected v$version)" >&2
    exit 2
fi

# every checksum, the pinned bundle hash, and a byte-identical regeneration
kit fixtures verify
# refuses a bundle whose sha256 is not the pinned one
kit fixtures pack --out "$out"

cd "$out"
sha256sum --check --strict SHA256SUMS
archive="ticdc-conformance-fixtures-$version.tar.gz"
actual=$(gunzip --stdout "$archive" | sha256sum | cut -d ' ' -f 1)
pinned=$(cut -d ' ' -f 1 "$pin")
if [[ $actual != "$pinned" ]]; then
    echo "error: $archive unpacks to sha256 $actual, but the package pins $pinned" >&2
    exit 1
fi
echo "release of fixtures $version: $archive, uncompressed sha256 $actual (the pinned one)"
