/* Copied from the team's cross-build notes: a test-rig shim only, used by scripts/build-targets.sh to let
   Debian's glibc-built libgcc_s load under Debian's musl loader for the linux-x64-musl loader check. */
/* Minimal gcompat-like shim so a glibc-built libstdc++/libgcc_s can load under Debian's musl loader
   (only to run @oven/bun-linux-x64-musl for a smoke test; NOT for production). */
#include <time.h>
#include <locale.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/random.h>
char __libc_single_threaded = 0;
int __cxa_thread_atexit_impl(void (*dtor)(void *), void *obj, void *dso) { (void)dtor; (void)obj; (void)dso; return 0; }
size_t __strftime_l(char *s, size_t n, const char *f, const struct tm *tm, locale_t l) { return strftime_l(s, n, f, tm, l); }
uint32_t arc4random(void) { uint32_t v = 0; getrandom(&v, sizeof v, 0); return v; }
/* glibc >= 2.35 API that Debian's libgcc_s uses (without fallback) to find unwind tables */
#include <link.h>
struct dl_find_object { unsigned long long dlfo_flags; void *dlfo_map_start, *dlfo_map_end; void *dlfo_link_map;
                        void *dlfo_eh_frame; unsigned long long reserved[7]; };
struct fo_ctx { uintptr_t pc; struct dl_find_object *r; int found; };
static int fo_cb(struct dl_phdr_info *info, size_t size, void *data) {
  struct fo_ctx *c = data; (void)size; uintptr_t lo = (uintptr_t)-1, hi = 0; int hit = 0; void *eh = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) { const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t a = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD) { if (a < lo) lo = a; if (a + ph->p_memsz > hi) hi = a + ph->p_memsz;
      if (c->pc >= a && c->pc < a + ph->p_memsz) hit = 1; }
    else if (ph->p_type == PT_GNU_EH_FRAME) eh = (void *)a; }
  if (!hit) return 0;
  c->r->dlfo_flags = 0; c->r->dlfo_map_start = (void *)lo; c->r->dlfo_map_end = (void *)hi;
  c->r->dlfo_link_map = 0; c->r->dlfo_eh_frame = eh; c->found = 1; return 1;
}
int _dl_find_object(void *pc, struct dl_find_object *result) {
  struct fo_ctx c = { (uintptr_t)pc, result, 0 }; dl_iterate_phdr(fo_cb, &c); return c.found ? 0 : -1;
}
struct { unsigned int a, b, c, d[1]; } __cpu_model;
int __cpu_indicator_init(void) { return 0; }
