#!/usr/bin/env bash
# Installs GAM Desktop for the current user: ~/.local/opt/gam-desktop, a launcher in
# ~/.local/bin and a menu entry. Run from the unpacked tarball: ./install.sh
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
rm -rf "$PREFIX/opt/gam-desktop"
mkdir -p "$PREFIX/opt" "$PREFIX/bin" "$PREFIX/share/applications" \
  "$PREFIX/share/icons/hicolor/256x256/apps"
cp -a "$HERE/app" "$PREFIX/opt/gam-desktop"
ln -sf "$PREFIX/opt/gam-desktop/gam-desktop" "$PREFIX/bin/gam-desktop"
cp "$HERE/gam-desktop.png" "$PREFIX/share/icons/hicolor/256x256/apps/gam-desktop.png"
sed "s|^Exec=.*|Exec=$PREFIX/bin/gam-desktop %F|" "$HERE/gam-desktop.desktop" \
  > "$PREFIX/share/applications/gam-desktop.desktop"
echo "GAM Desktop installed: run gam-desktop, or find it in your applications menu."
