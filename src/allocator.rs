//! The addon's allocator: mimalloc, for the Rust side only (Node's heap is untouched).
//!
//! The addon's allocations are many and small and often freed on another thread than the one
//! that made them (a message parsed by the reader, dropped after the JS thread took its
//! result). glibc's malloc spent a third of the hashing profile in free and consolidation;
//! mimalloc roughly halves that work (numbers in bench/RESULTS.md).

#[cfg(not(feature = "alloc-count"))]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The same allocator, counting the bytes the addon holds live (`alloc-count`, a build for
/// measuring memory only: the count is one atomic add per allocation and free, on every
/// thread, which a release does not pay).
#[cfg(feature = "alloc-count")]
#[global_allocator]
static ALLOCATOR: counting::Counting = counting::Counting;

#[cfg(feature = "alloc-count")]
mod counting {
    use std::alloc::{GlobalAlloc, Layout};
    use std::sync::atomic::{AtomicIsize, Ordering};

    pub(super) static LIVE: AtomicIsize = AtomicIsize::new(0);

    pub(crate) struct Counting;

    // SAFETY: every method hands its arguments to mimalloc's own `GlobalAlloc` unchanged and
    // returns what it returns; the count beside it touches no memory the caller gets.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
            // SAFETY: the caller's contract for `alloc`, passed on.
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
            // SAFETY: the caller's contract for `alloc_zeroed`, passed on.
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
            // SAFETY: the caller's contract for `dealloc`, passed on.
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let grown = new_size as isize - layout.size() as isize;
            LIVE.fetch_add(grown, Ordering::Relaxed);
            // SAFETY: the caller's contract for `realloc`, passed on.
            unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
        }
    }
}

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
    fn mi_process_info(
        elapsed_msecs: *mut usize,
        user_msecs: *mut usize,
        system_msecs: *mut usize,
        current_rss: *mut usize,
        peak_rss: *mut usize,
        current_commit: *mut usize,
        peak_commit: *mut usize,
        page_faults: *mut usize,
    );
}

/// The addon's native memory: what its allocator holds from the system (`committed`: live
/// blocks and the freed ones it keeps for reuse) and, in an `alloc-count` build, what of it is
/// live. For the benchmarks' soak, which tells them apart from V8's heap and the rest of RSS.
pub(crate) struct Memory {
    pub(crate) committed: usize,
    pub(crate) live: Option<isize>,
}

pub(crate) fn memory() -> Memory {
    let mut out = [0usize; 8];
    let [a, b, c, d, e, f, g, h] = &mut out;
    // SAFETY: `mi_process_info` writes one `size_t` through each of its eight pointers, each
    // to a distinct live element of `out`; it reads mimalloc's own statistics only.
    unsafe { mi_process_info(a, b, c, d, e, f, g, h) };
    #[cfg(feature = "alloc-count")]
    let live = Some(counting::LIVE.load(std::sync::atomic::Ordering::Relaxed));
    #[cfg(not(feature = "alloc-count"))]
    let live = None;
    Memory {
        committed: out[5],
        live,
    }
}

/// Hands memory freed by this thread back to the system now. mimalloc keeps freed segments
/// for reuse and purges them only as the thread allocates again, so a reader thread that
/// dropped a huge frame and then went idle would keep it resident.
pub(crate) fn return_free_memory() {
    // SAFETY: `mi_collect` works on the calling thread's own heap and may be called from any
    // thread at any time; mimalloc is the global allocator, so that heap is the one in use.
    unsafe { mi_collect(true) };
    RETURNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}

/// How many times a thread handed its freed memory back (`nativeMemory().returns`).
static RETURNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

pub(crate) fn returns() -> usize {
    RETURNS.load(std::sync::atomic::Ordering::Relaxed)
}
