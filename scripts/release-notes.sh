#!/bin/sh
# Print the section of a changelog for one version: the lines under its `## VERSION` (or
# `## [VERSION]`) heading, up to the next `## ` heading. Fails when the changelog has no such
# section or it is empty, so a release never goes out without notes.
#
# Usage: scripts/release-notes.sh VERSION [CHANGELOG]   (CHANGELOG defaults to CHANGELOG.md)
set -eu

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 VERSION [CHANGELOG]" >&2
  exit 2
fi
version=${1#v}
changelog=${2:-CHANGELOG.md}
[ -f "$changelog" ] || { echo "release-notes: $changelog: no such file" >&2; exit 1; }

notes=$(awk -v v="$version" '
  /^## / {
    if (found) exit
    h = $2
    gsub(/^\[|\]$/, "", h)
    if (h == v) { found = 1; next }
  }
  found { print }
' "$changelog")
# Drop blank lines at either end.
notes=$(printf '%s\n' "$notes" | sed -e '/./,$!d')
if [ -z "$notes" ]; then
  echo "release-notes: $changelog has no section \`## $version\` (or it is empty)" >&2
  exit 1
fi
printf '%s\n' "$notes"
