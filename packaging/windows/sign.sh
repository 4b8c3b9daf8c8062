#!/usr/bin/env bash
# Signs Windows executables with the release certificate (Authenticode: SHA-256 digests and
# an RFC 3161 timestamp, so the signature outlives the certificate), then verifies each.
# Run from Git Bash on a GitHub Windows runner by the release workflow:
#   WINDOWS_CERTIFICATE=<the .pfx in base64> WINDOWS_CERTIFICATE_PASSWORD=... \
#     bash packaging/windows/sign.sh FILE...
set -euo pipefail
: "${WINDOWS_CERTIFICATE:?the release certificate (.pfx), in base64}"
[ "$#" -gt 0 ] || { echo "sign.sh: no file to sign" >&2; exit 2; }
signtool=""
# The SDKs' folders sort by version: the last one found is the newest.
for candidate in "/c/Program Files (x86)/Windows Kits/10/bin/"*/x64/signtool.exe; do
  if [ -f "$candidate" ]; then signtool=$candidate; fi
done
[ -n "$signtool" ] || { echo "sign.sh: no signtool.exe (Windows SDK) on this machine" >&2; exit 1; }
cert="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gam-desktop-signing.pfx"
trap 'rm -f "$cert"' EXIT
printf '%s' "$WINDOWS_CERTIFICATE" | base64 --decode > "$cert"
for file in "$@"; do
  [ -f "$file" ] || { echo "sign.sh: $file does not exist" >&2; exit 1; }
  # MSYS would rewrite the /switches as paths; the paths are handed over as Windows paths.
  MSYS_NO_PATHCONV=1 "$signtool" sign /f "$(cygpath -w "$cert")" \
    /p "${WINDOWS_CERTIFICATE_PASSWORD:-}" /fd sha256 /tr http://timestamp.digicert.com \
    /td sha256 "$(cygpath -w "$file")"
  MSYS_NO_PATHCONV=1 "$signtool" verify /pa "$(cygpath -w "$file")"
done
