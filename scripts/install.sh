#!/bin/sh
# Install a prebuilt runner binary from a GitHub release, checksum-verified. POSIX sh; needs
# only curl or wget, tar (with gzip), and sha256sum or shasum. See usage() or `--help`.
set -eu

DEFAULT_BASE_URL="https://github.com/your-org/runner/releases/download"

say_err() {
  echo "install.sh: error: $*" >&2
}

die() {
  say_err "$@"
  exit 1
}

usage() {
  cat <<'USAGE'
Install a prebuilt runner binary from a GitHub release, checksum-verified.

  curl -fsSL https://github.com/your-org/runner/releases/latest/download/install.sh | sh

Environment:
  RUNNER_VERSION           version to install, 1.2.3 or v1.2.3 (default: latest)
  RUNNER_INSTALL_DIR       where the binary goes (default: ~/.local/bin)
  RUNNER_RELEASE_BASE_URL  where the releases are (default:
                           https://github.com/your-org/runner/releases/download); the files
                           are BASE/vVERSION/runner-VERSION-TARGET.tar.gz and
                           BASE/vVERSION/SHA256SUMS, and `latest` is read from
                           BASE-without-/download/latest/download/SHA256SUMS

Options:
  --resolve-version  print the version that would be installed and exit
  -h, --help         print this help

It prints one line saying what it installed; on any failure it exits non-zero and installs
nothing.
USAGE
}

resolve_only=false
for arg in "$@"; do
  case $arg in
    --resolve-version) resolve_only=true ;;
    -h | --help)
      usage
      exit 0
      ;;
    *) die "unknown option '$arg' (options: --resolve-version, --help)" ;;
  esac
done

# The release target for this machine: Linux gets the static musl build.
detect_target() {
  os=$(uname -s 2>/dev/null || echo unknown)
  cpu=$(uname -m 2>/dev/null || echo unknown)
  case $os in
    Linux) os_part=unknown-linux-musl ;;
    Darwin)
      os_part=apple-darwin
      # A shell under Rosetta reports x86_64 on Apple silicon: take the native binary.
      if [ "$cpu" = x86_64 ] && [ "$(sysctl -n sysctl.proc_translated 2>/dev/null || echo 0)" = 1 ]; then
        cpu=arm64
      fi
      ;;
    *) die "no prebuilt runner for the operating system '$os' (there are builds for Linux and macOS); build from source instead: cargo install --locked --git https://github.com/your-org/runner runner" ;;
  esac
  case $cpu in
    x86_64 | amd64) cpu_part=x86_64 ;;
    aarch64 | arm64) cpu_part=aarch64 ;;
    *) die "no prebuilt runner for the CPU '$cpu' on $os (there are builds for x86_64 and aarch64); build from source instead: cargo install --locked --git https://github.com/your-org/runner runner" ;;
  esac
  echo "$cpu_part-$os_part"
}

# fetch URL FILE: download URL into FILE, failing on any HTTP error.
fetch() {
  if command -v curl >/dev/null 2>&1; then
    curl --fail --silent --show-error --location --retry 3 --output "$2" "$1" || die "could not download $1"
  elif command -v wget >/dev/null 2>&1; then
    wget --quiet --tries=3 --output-document="$2" "$1" || die "could not download $1"
  else
    die "neither curl nor wget is installed; install one of them"
  fi
}

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d ' ' -f 1
  elif command -v shasum >/dev/null 2>&1; then
    shasum -a 256 "$1" | cut -d ' ' -f 1
  else
    die "neither sha256sum nor shasum is installed; install one of them"
  fi
}

# The checksum SHA256SUMS lists for a file name (`HASH  NAME` or `HASH *NAME`).
listed_sum() {
  awk -v f="$2" '$2 == f || $2 == "*" f { print $1; exit }' "$1"
}

target=$(detect_target)
base_url=${RUNNER_RELEASE_BASE_URL:-$DEFAULT_BASE_URL}
base_url=${base_url%/}
version=${RUNNER_VERSION:-latest}
version=${version#v}

tmp=$(mktemp -d 2>/dev/null || mktemp -d -t runner-install)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if [ "$version" = latest ]; then
  latest_url="${base_url%/download}/latest/download/SHA256SUMS"
  fetch "$latest_url" "$tmp/LATEST_SHA256SUMS"
  version=$(awk -v t="$target" '{
    n = $2; sub(/^\*/, "", n)
    suffix = "-" t ".tar.gz"
    if (index(n, "runner-") == 1 && substr(n, length(n) - length(suffix) + 1) == suffix) {
      print substr(n, 8, length(n) - 7 - length(suffix)); exit
    }
  }' "$tmp/LATEST_SHA256SUMS")
  [ -n "$version" ] || die "the latest release ($latest_url) has no archive for $target"
fi
case $version in
  '' | *[!A-Za-z0-9._+-]*) die "RUNNER_VERSION '$version' is not a version (expected e.g. 1.2.3)" ;;
esac
if [ "$resolve_only" = true ]; then
  echo "$version"
  exit 0
fi

archive="runner-$version-$target.tar.gz"
release_url="$base_url/v$version"
fetch "$release_url/SHA256SUMS" "$tmp/SHA256SUMS"
fetch "$release_url/$archive" "$tmp/$archive"

expected=$(listed_sum "$tmp/SHA256SUMS" "$archive")
[ -n "$expected" ] || die "$release_url/SHA256SUMS lists no checksum for $archive"
actual=$(sha256_of "$tmp/$archive")
if [ "$actual" != "$expected" ]; then
  die "checksum mismatch for $archive: SHA256SUMS says $expected, the download is $actual; nothing installed"
fi

mkdir "$tmp/unpacked"
tar -xzf "$tmp/$archive" -C "$tmp/unpacked" || die "could not unpack $archive"
binary="$tmp/unpacked/runner-$version-$target/runner"
[ -f "$binary" ] || die "$archive holds no runner-$version-$target/runner"

install_dir=${RUNNER_INSTALL_DIR:-${HOME:?HOME is not set; set RUNNER_INSTALL_DIR}/.local/bin}
mkdir -p "$install_dir" || die "could not create $install_dir"
# Copy next to the destination, then rename: the old binary is replaced whole or not at all.
staged="$install_dir/.runner.install.$$"
cp "$binary" "$staged" || { rm -f "$staged"; die "could not write to $install_dir"; }
chmod 755 "$staged"
mv -f "$staged" "$install_dir/runner" || { rm -f "$staged"; die "could not install $install_dir/runner"; }

case ":${PATH:-}:" in
  *":$install_dir:"*) note="" ;;
  *) note=" (not on PATH: add $install_dir to it)" ;;
esac
echo "installed runner $version ($target) to $install_dir/runner$note"
