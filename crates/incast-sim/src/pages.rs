//! The allocator the simulator's programs run on: the system's, with every large block backed
//! by 2 MiB pages where the kernel gives them on request (transparent huge pages in its
//! `madvise` mode, the usual default).
//!
//! A 1,024-host cluster reads its million endpoints, its packets and its links at random over
//! hundreds of megabytes. With 4 KiB pages nearly every such read also misses the TLB and walks
//! the page table; with 2 MiB pages the walks mostly go (glibc's `glibc.malloc.hugetlb=1`
//! tunable, which does the same for every block, took 11-14% off that cluster's CPU time). The
//! tunable is read from the environment before a process starts, which a Python extension
//! cannot set, so each program installs this allocator instead:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: incast_sim::pages::LargePages = incast_sim::pages::LargePages;
//! ```
//!
//! Large blocks (at least 2 MiB: the packet pool, the endpoint tables, the event buckets) are
//! advised as they are handed out; the small ones (most of an endpoint's state) come from
//! glibc's heap at the program break, which is made to grow 32 MiB at a time and advised as it
//! grows. Measured on a 0.4 s run of the 1,024-host cluster (four alternating pairs): x0.89 of
//! the CPU time, 655 -> 837 MiB peak; the 20-host cluster unchanged. It changes where memory
//! sits, never what a simulation computes.

use std::alloc::{GlobalAlloc, Layout, System};
#[cfg(all(target_os = "linux", target_env = "gnu"))]
use std::sync::atomic::{AtomicUsize, Ordering};

/// A huge page: blocks smaller than this hold no whole one and are left as they are.
const HUGE_PAGE: usize = 2 << 20;

/// The system allocator, advising the kernel to back the whole 2 MiB pages inside each block
/// of at least [`HUGE_PAGE`] bytes with huge pages.
#[derive(Debug, Clone, Copy, Default)]
pub struct LargePages;

// SAFETY: every call goes to the system allocator with the caller's arguments unchanged;
// the advice only concerns pages inside the block just returned, which the caller owns.
unsafe impl GlobalAlloc for LargePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        advise(p, layout.size());
        heap_grown();
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        advise(p, layout.size());
        heap_grown();
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }

    /// A block growing to [`HUGE_PAGE`] or more is moved into a new block advised before its
    /// pages are touched: glibc grows a large block in place or with `mremap`, which keeps the
    /// pages already touched as small ones (advice only changes how later faults are served),
    /// so a table grown by doubling (the idle endpoints' compact forms, the per-endpoint
    /// tables) kept about half of itself on small pages. The copy is the one a vector's growth
    /// would make anyway.
    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size < HUGE_PAGE || new_size <= layout.size() {
            let p = System.realloc(ptr, layout, new_size);
            advise(p, new_size);
            heap_grown();
            return p;
        }
        // SAFETY: the caller guarantees `new_size`, rounded up to the alignment, does not
        // overflow; the layout's alignment is a power of two.
        let grown = Layout::from_size_align_unchecked(new_size, layout.align());
        let p = self.alloc(grown);
        if !p.is_null() {
            // SAFETY: both blocks are live, distinct and at least `layout.size()` long.
            std::ptr::copy_nonoverlapping(ptr, p, layout.size());
            self.dealloc(ptr, layout);
        }
        p
    }
}

/// The end of the heap's part already advised (0 before the first allocation).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
static ADVISED: AtomicUsize = AtomicUsize::new(0);

/// How far the heap grows at a time (glibc's `M_TOP_PAD`, 128 KiB by default): whole huge
/// pages, so that a growth is advised while most of its pages are still untouched (a 2 MiB
/// range already touched in one place is backed by small pages from then on).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TOP_PAD: usize = 16 * HUGE_PAGE;

/// The small blocks (most of an endpoint's state) come from glibc's heap, which grows at the
/// program break: once it has grown by a huge page since last advised, advise the new part.
/// `sbrk(0)` reads the break glibc keeps, without a system call. (Elsewhere than glibc on
/// Linux, nothing.)
#[inline]
fn heap_grown() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: sbrk(0) moves nothing; it returns the current break.
        let brk = unsafe { libc::sbrk(0) } as usize;
        let done = ADVISED.load(Ordering::Relaxed);
        if brk >= done.saturating_add(HUGE_PAGE) || brk.saturating_add(HUGE_PAGE) <= done {
            advise_heap(done, brk);
        }
    }
}

/// Advise the heap from `done` (or, the first time, from the break's huge page) to the break
/// `brk`; a heap trimmed below `done` is advised again as it regrows. The first time, also make
/// glibc grow the heap [`TOP_PAD`] at a time (and keep as much when it trims: a Python process
/// running the extension may hold up to 32 MiB of freed heap).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[inline(never)]
fn advise_heap(done: usize, brk: usize) {
    let end = brk & !(HUGE_PAGE - 1);
    let start = if done == 0 || done > end { end } else { done };
    // SAFETY: mallopt changes how far glibc grows its heap, not any block; the range is the
    // heap's, below the break, and the advice changes no contents.
    unsafe {
        if done == 0 {
            libc::mallopt(libc::M_TOP_PAD, TOP_PAD as libc::c_int);
        }
        if end > start {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
    // Racing threads at worst advise the same range twice.
    ADVISED.store(end, Ordering::Relaxed);
}

/// The whole huge pages inside `size` bytes at `p`: their start and length, if any.
fn whole_pages(p: usize, size: usize) -> Option<(usize, usize)> {
    if size < HUGE_PAGE {
        return None;
    }
    let start = p.checked_next_multiple_of(HUGE_PAGE)?;
    let end = (p.checked_add(size)?) & !(HUGE_PAGE - 1);
    (end > start).then(|| (start, end - start))
}

/// Ask for huge pages under the block of `size` bytes at `p` (a hint: a refusal, or a kernel
/// without transparent huge pages, changes nothing but the speed).
#[inline]
fn advise(p: *mut u8, size: usize) {
    if p.is_null() || size < HUGE_PAGE {
        return;
    }
    advise_out_of_line(p as usize, size);
}

#[inline(never)]
fn advise_out_of_line(p: usize, size: usize) {
    let Some((start, len)) = whole_pages(p, size) else {
        return;
    };
    #[cfg(target_os = "linux")]
    // SAFETY: the range lies inside a block the allocator has just handed out; MADV_HUGEPAGE
    // changes no contents, only how the pages are backed.
    unsafe {
        libc::madvise(start as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_whole_huge_pages_inside_the_block_are_advised() {
        // Too small to hold one.
        assert_eq!(whole_pages(0, HUGE_PAGE - 1), None);
        // Aligned: exactly its pages.
        assert_eq!(
            whole_pages(4 * HUGE_PAGE, 3 * HUGE_PAGE),
            Some((4 * HUGE_PAGE, 3 * HUGE_PAGE))
        );
        // Misaligned: the pages wholly inside, none past its end.
        assert_eq!(
            whole_pages(HUGE_PAGE + 16, 3 * HUGE_PAGE),
            Some((2 * HUGE_PAGE, 2 * HUGE_PAGE))
        );
        // Large enough but straddling one boundary: no whole page.
        assert_eq!(whole_pages(HUGE_PAGE / 2, HUGE_PAGE + 4096), None);
        // At the top of the address space: no overflow.
        assert_eq!(whole_pages(usize::MAX - HUGE_PAGE, 2 * HUGE_PAGE), None);
    }

    #[test]
    fn blocks_read_back_what_was_written_through_growth() {
        let a = LargePages;
        let layout = Layout::from_size_align(3 * HUGE_PAGE, 64).expect("a valid layout");
        // SAFETY: the layout is non-zero; every pointer is checked and freed with its layout.
        unsafe {
            let p = a.alloc_zeroed(layout);
            assert!(!p.is_null());
            assert_eq!(*p.add(3 * HUGE_PAGE - 1), 0);
            *p.add(HUGE_PAGE) = 7;
            let q = a.realloc(p, layout, 5 * HUGE_PAGE);
            assert!(!q.is_null());
            assert_eq!(*q.add(HUGE_PAGE), 7);
            a.dealloc(
                q,
                Layout::from_size_align(5 * HUGE_PAGE, 64).expect("valid"),
            );
        }
    }
}
