#!/bin/sh
# First step of the composite action (action.yml): decide how runner gets onto the machine and
# write the decision to $GITHUB_OUTPUT.
#
#   mode=install  version=X.Y.Z  base-url=…  bin-dir=…  cache-key=runner-bin-…
#   mode=build    bin-dir=ACTION_PATH/target/release  cache-key=runner-src-…  cache-prefix=…
#
# Install a release when `version` is set, or when the action is used at a release tag
# (`uses: owner/runner@v1.2.3`), at a major tag (`@v1`: the release it points at), or at a
# branch (the latest release). Build from source when
# `build-from-source` is true, or when the action is used at a commit or from a local path:
# that code need not match any release.
#
# Environment: INPUT_VERSION, INPUT_BUILD_FROM_SOURCE, ACTION_PATH, ACTION_REF,
# ACTION_REPOSITORY, and GitHub's RUNNER_OS, RUNNER_ARCH, RUNNER_TOOL_CACHE, RUNNER_TEMP,
# GITHUB_REPOSITORY, GITHUB_OUTPUT; RUNNER_RELEASE_BASE_URL overrides where releases are.
set -eu

die() {
  echo "::error title=runner action::$*"
  exit 1
}

: "${ACTION_PATH:?}" "${GITHUB_OUTPUT:?}"
os=${RUNNER_OS:-$(uname -s)}
arch=${RUNNER_ARCH:-$(uname -m)}

# github.action_ref / github.action_repository are not always set for composite actions; the
# action's own checkout is …/_actions/OWNER/REPO/REF, which says the same.
ref=${ACTION_REF:-}
repo=${ACTION_REPOSITORY:-}
case $ACTION_PATH in
  */_actions/*/*/*)
    rest=${ACTION_PATH%/*}
    name=${rest##*/}
    rest=${rest%/*}
    [ -n "$ref" ] || ref=${ACTION_PATH##*/}
    [ -n "$repo" ] || repo="${rest##*/}/$name"
    ;;
esac
repo=${repo:-${GITHUB_REPOSITORY:-}}

is_release_tag() {
  printf '%s\n' "$1" | grep -Eq '^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.+-]+)?$'
}

mode=install
version=""
case $(printf '%s' "${INPUT_BUILD_FROM_SOURCE:-false}" | tr '[:upper:]' '[:lower:]') in
  true) mode=build why="build-from-source: true" ;;
  false | '') ;;
  *) die "build-from-source must be true or false, not '${INPUT_BUILD_FROM_SOURCE}'" ;;
esac
if [ "$mode" = install ]; then
  if [ -n "${INPUT_VERSION:-}" ]; then
    version=$INPUT_VERSION
    why="version: $INPUT_VERSION"
  elif is_release_tag "$ref"; then
    version=$ref
    why="the action is used at the release tag $ref"
  elif printf '%s\n' "$ref" | grep -Eq '^v[0-9]+(\.[0-9]+)?$'; then
    # A major (or minor) tag the release workflow moves to each newest release of that line:
    # the release is the one whose source the tag points at, its Cargo.toml version.
    version=$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$ACTION_PATH/Cargo.toml" | head -n 1)
    [ -n "$version" ] || die "cannot read the version of the action's source at $ref"
    why="the action is used at $ref, whose newest release is $version"
  elif [ -z "$ref" ]; then
    mode=build why="the action is used from a local path, which need not match a release"
  elif printf '%s\n' "$ref" | grep -Eq '^[0-9a-f]{40}$'; then
    mode=build why="the action is pinned to the commit $ref (set version: to install a release)"
  else
    version=latest
    why="the action is used at $ref, not a release tag"
  fi
fi

if [ "$mode" = install ]; then
  base_url=${RUNNER_RELEASE_BASE_URL:-https://github.com/$repo/releases/download}
  version=$(RUNNER_VERSION=$version RUNNER_RELEASE_BASE_URL=$base_url sh "$ACTION_PATH/scripts/install.sh" --resolve-version) ||
    die "could not find the runner release '${version}' at $base_url (set build-from-source: true to build it instead)"
  tool_cache=${RUNNER_TOOL_CACHE:-${RUNNER_TEMP:-/tmp}}
  {
    echo "mode=install"
    echo "version=$version"
    echo "base-url=$base_url"
    echo "bin-dir=$tool_cache/runner/$version/$arch"
    echo "cache-key=runner-bin-$version-$os-$arch"
  } >>"$GITHUB_OUTPUT"
  echo "runner: installing release $version ($why)"
else
  # hashFiles() only sees the workspace, not the action's own checkout: hash Cargo.lock and
  # the toolchain here.
  if command -v sha256sum >/dev/null 2>&1; then sum="sha256sum"; else sum="shasum -a 256"; fi
  lock=$({ cat "$ACTION_PATH/Cargo.lock"; rustc -V 2>/dev/null || true; } | $sum | cut -c 1-20)
  {
    echo "mode=build"
    echo "bin-dir=$ACTION_PATH/target/release"
    echo "cache-key=runner-src-$os-$arch-$lock"
    echo "cache-prefix=runner-src-$os-$arch-"
  } >>"$GITHUB_OUTPUT"
  echo "runner: building from source ($why)"
fi
