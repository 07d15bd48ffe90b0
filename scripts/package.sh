#!/bin/sh
# Package release files; the release workflow runs this, and tests/install.rs runs it on the
# host target.
#
#   scripts/package.sh archive VERSION TARGET BINARY OUT_DIR
#       Write OUT_DIR/runner-VERSION-TARGET.tar.gz: one directory runner-VERSION-TARGET/ with
#       the binary (as `runner`), README.md, CHANGELOG.md, LICENSE-MIT and LICENSE-APACHE.
#   scripts/package.sh checksums DIR
#       Write DIR/SHA256SUMS (`sha256sum` format) over every other file in DIR.
#
# Prints the path of the file it wrote.
set -eu

root=$(cd "$(dirname "$0")/.." && pwd)

die() {
  echo "package.sh: $*" >&2
  exit 1
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$@"
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$@"
  else
    die "neither sha256sum nor shasum is installed"
  fi
}

# A name that is safe as one path component.
check_name() {
  case $2 in
    '' | *[!A-Za-z0-9._+-]*) die "$1 '$2' must be non-empty and use only A-Z a-z 0-9 . _ + -" ;;
  esac
}

archive() {
  [ $# -eq 4 ] || die "usage: $0 archive VERSION TARGET BINARY OUT_DIR"
  version=${1#v}
  target=$2
  binary=$3
  out=$4
  check_name version "$version"
  check_name target "$target"
  [ -f "$binary" ] || die "$binary: no such file (build the binary first)"
  name="runner-$version-$target"
  staging=$(mktemp -d)
  trap 'rm -rf "$staging"' EXIT
  mkdir "$staging/$name"
  cp "$binary" "$staging/$name/runner"
  chmod 755 "$staging/$name/runner"
  for f in README.md CHANGELOG.md LICENSE-MIT LICENSE-APACHE; do
    [ -f "$root/$f" ] || die "$root/$f: no such file (every archive carries it)"
    cp "$root/$f" "$staging/$name/$f"
    chmod 644 "$staging/$name/$f"
  done
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  # Owner and group 0 in the archive, not the build machine's user; no macOS ._ files.
  if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    owner="--owner=0 --group=0 --numeric-owner"
  else
    owner="--uid 0 --gid 0 --numeric-owner"
  fi
  # shellcheck disable=SC2086 # $owner is several options
  (cd "$staging" && COPYFILE_DISABLE=1 tar $owner -czf "$out/$name.tar.gz" "$name")
  echo "$out/$name.tar.gz"
}

checksums() {
  [ $# -eq 1 ] || die "usage: $0 checksums DIR"
  [ -d "$1" ] || die "$1: no such directory"
  dir=$(cd "$1" && pwd)
  (
    cd "$dir"
    files=$(find . -maxdepth 1 -type f ! -name SHA256SUMS ! -name '.*' | sed 's|^\./||' | LC_ALL=C sort)
    [ -n "$files" ] || die "$dir: no files to sum"
    # One name a line, none with blanks (check_name guarantees that for the archives).
    # shellcheck disable=SC2086
    sha256 $files >SHA256SUMS.tmp
    mv SHA256SUMS.tmp SHA256SUMS
  )
  echo "$dir/SHA256SUMS"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case $cmd in
  archive) archive "$@" ;;
  checksums) checksums "$@" ;;
  *) die "usage: $0 archive VERSION TARGET BINARY OUT_DIR | $0 checksums DIR" ;;
esac
