#!/usr/bin/env bash
# Builds the Linux bundle (dist/gam-desktop/) and a distributable tarball with a .desktop
# file, an icon and an installer script:  bash packaging/build_linux.sh
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || { python3 -m venv .venv; PY=.venv/bin/python; }
"$PY" -m pip install -q -e '.[package]'
VERSION=$(PYTHON="$PY" bash packaging/release_version.sh) # checked against a release's tag
started=$(date +%s)
"$PY" -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build/pyinstaller \
  packaging/gam-desktop.spec
NAME="gam-desktop-$VERSION-linux-$(uname -m)"
STAGE="dist/$NAME"
rm -rf "$STAGE" && mkdir -p "$STAGE"
cp -a dist/gam-desktop "$STAGE/app"
cp resources/icons/gam-desktop-256.png "$STAGE/gam-desktop.png"
cp packaging/linux/gam-desktop.desktop packaging/linux/install.sh packaging/linux/uninstall.sh "$STAGE/"
tar -C dist -czf "dist/$NAME.tar.gz" "$NAME"
echo "built dist/gam-desktop/ and dist/$NAME.tar.gz in $(( $(date +%s) - started )) s"
du -sh dist/gam-desktop "dist/$NAME.tar.gz"
