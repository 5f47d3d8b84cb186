#!/usr/bin/env bash
# Publishes a release: the seven platform packages, then the main package
# (`npm run release:publish [-- --tag next]`). The release workflow's publish job runs it, and so
# does `npm run release:local` against a local registry: the registry and its credentials come
# from npm's configuration (NPM_CONFIG_USERCONFIG, as actions/setup-node writes it).
#
# Before: `napi artifacts` has put each `mcp-native.<platform>.node` into npm/<platform>/.
# 1. every version number is in step (scripts/version.mjs);
# 2. `napi prepublish -t npm` checks each platform package (name, files, the binary present
#    and packed) and runs `npm publish` in it, then writes the root's optionalDependencies;
# 3. `npm publish --ignore-scripts` publishes the main package. Scripts are off because npm runs
#    `prepare` on publish, which here is the addon's release build: minutes of compiling on the
#    publishing machine for a binary the main package does not ship (its `files` leave it out).
#    (The package's own prepublishOnly refuses a bare `npm publish` for the same reason.)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cd "$repo"

tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag="${2:?--tag needs a dist-tag}"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "publish: unknown argument $1 (usage: scripts/publish.sh [--tag <dist-tag>])" >&2; exit 2 ;;
  esac
done

node scripts/version.mjs

# Provenance needs package.json's repository to be the repository the workflow runs in; a
# mismatch is refused by the registry, after the platform packages would already be out.
if [ -n "${GITHUB_REPOSITORY:-}" ]; then
  url="$(node -p 'require("./package.json").repository.url')"
  case "$url" in
    *"github.com/$GITHUB_REPOSITORY.git" | *"github.com/$GITHUB_REPOSITORY") ;;
    *) echo "publish: package.json repository.url is $url, but this runs in $GITHUB_REPOSITORY" >&2; exit 1 ;;
  esac
fi

# The platform packages are published by `npm publish` run inside napi prepublish, which passes
# the environment on: the dist-tag goes to them that way (npm refuses a pre-release without one).
if [ -n "$tag" ]; then export npm_config_tag="$tag"; fi

echo "publish: platform packages (napi prepublish -t npm)"
npx napi prepublish -t npm
# napi prepublish rewrote optionalDependencies from package.json's version: still in step.
node scripts/version.mjs

echo "publish: $(node -p 'require("./package.json").name')@$(node -p 'require("./package.json").version')"
npm publish --ignore-scripts --access public ${tag:+--tag "$tag"}
