//! The addon's allocator: mimalloc, for the Rust side only (Node's heap is untouched).
//!
//! The addon's allocations are many and small and often freed on another thread than the one
//! that made them (a message parsed by the reader, dropped after the JS thread took its
//! result). glibc's malloc spent a third of the hashing profile in free and consolidation;
//! mimalloc roughly halves that work (numbers in bench/RESULTS.md).

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_arena_eager_commit` in mimalloc's `mi_option_e`.
#[cfg(target_os = "linux")]
const ARENA_EAGER_COMMIT: std::ffi::c_int = 4;

#[cfg(target_os = "linux")]
extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// Arenas committed eagerly are backed by transparent huge pages on Linux, so a host with a
/// few sources paid resident memory in 2 MiB steps (50 sources: 128 MB instead of 106 MB).
/// Runs when the addon is loaded, before its first allocation creates an arena.
#[cfg(target_os = "linux")]
#[used]
// SAFETY: `.init_array` holds pointers to `extern "C" fn()` run once at load, before any Rust
// code of the addon; this entry is exactly one such pointer, to a function that only sets a
// mimalloc option.
#[unsafe(link_section = ".init_array")]
static CONFIGURE: extern "C" fn() = {
    extern "C" fn configure() {
        // SAFETY: `mi_option_set` takes any option number and value (mimalloc's documented
        // API), and touches only mimalloc's own option table; 4 is
        // `mi_option_arena_eager_commit` in the mimalloc this crate links.
        unsafe { mi_option_set(ARENA_EAGER_COMMIT, 0) };
    }
    configure
};

extern "C" {
    fn mi_collect(force: bool);
}

/// Hands memory freed by this thread back to the system now. mimalloc keeps freed segments
/// for reuse and purges them only as the thread allocates again, so a reader thread that
/// dropped a huge frame and then went idle would keep it resident.
pub(crate) fn return_free_memory() {
    // SAFETY: `mi_collect` works on the calling thread's own heap and may be called from any
    // thread at any time; mimalloc is the global allocator, so that heap is the one in use.
    unsafe { mi_collect(true) };
}
