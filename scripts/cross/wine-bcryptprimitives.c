/* Test-rig shim (scripts/build-targets.sh, Wine smoke test only): Wine 8 lacks bcryptprimitives.dll. */
/* Wine 8.0 (Debian 12) lacks bcryptprimitives.dll, which Rust >= 1.78 std imports (ProcessPrng).
   Test-runner shim only: real Windows 10+ ships it. */
#include <windows.h>
#include <bcrypt.h>
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  while (len) { ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
    if (BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG) != 0) return FALSE;
    data += n; len -= n; }
  return TRUE;
}
