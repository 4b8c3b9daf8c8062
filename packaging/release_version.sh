#!/usr/bin/env bash
# The version a release is built as (pyproject.toml's, as the installed package reports it),
# printed once checked: a usable file-name part, and, when a tag started the build, the
# version that tag names. A tag v0.2.0 on a tree that still says 0.1.0 would otherwise
# publish installers named 0.1.0 under the release v0.2.0.
#   bash packaging/release_version.sh        (PYTHON: the interpreter to ask, else python)
set -euo pipefail
PY=${PYTHON:-python}
# pyproject.toml's version, then the one the app says (About, --version): they must agree.
# (Python on Windows ends its lines with CR LF, and $(...) removes only the LF.)
versions=$("$PY" -c 'from importlib.metadata import version; import gam_desktop
print(version("gam-desktop"), gam_desktop.__version__)' | tr -d '\r')
version=${versions%% *}
case "$version" in
  "" | *[!0-9A-Za-z.+-]*)
    echo "release_version.sh: unusable version '$version'" >&2
    exit 1
    ;;
esac
if [ "$versions" != "$version $version" ]; then
  echo "release_version.sh: pyproject.toml says $version, gam_desktop/__init__.py" \
    "'${versions#* }': set both" >&2
  exit 1
fi
if [ "${GITHUB_REF_TYPE:-}" = tag ] && [ "${GITHUB_REF_NAME:-}" != "v$version" ]; then
  echo "release_version.sh: the tag ${GITHUB_REF_NAME:-} does not name version $version" \
    "(pyproject.toml): tag v$version, or set the version to the tag's" >&2
  exit 1
fi
printf '%s\n' "$version"
