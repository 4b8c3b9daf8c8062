#!/usr/bin/env bash
# Removes what install.sh installed. Your memories, settings and keychain entry stay; see
# the README for where they live.
set -euo pipefail
PREFIX=${PREFIX:-$HOME/.local}
rm -rf "$PREFIX/opt/gam-desktop" "$PREFIX/bin/gam-desktop" \
  "$PREFIX/share/applications/gam-desktop.desktop" \
  "$PREFIX/share/icons/hicolor/256x256/apps/gam-desktop.png"
echo "GAM Desktop removed."
