//! The simulator's global allocator: mimalloc, entered the way Rust's own `System` allocator
//! enters `malloc`.
//!
//! The `mimalloc` crate (0.1.4x and later) hands every request to `mi_malloc_aligned`, whose
//! checks and generic path cost about 5 % of a ShuffleWatcher run's instructions (callgrind,
//! FB-2010's first hour: 7.6 M calls, a quarter of them through the generic path). A request
//! whose alignment is at most what `mi_malloc` guarantees anyway (16 bytes, and no more than
//! its size, as `System` checks for `malloc`) goes to `mi_malloc`, `mi_zalloc` or
//! `mi_realloc`; any other to the aligned entries.

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};
use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

/// The alignment every `mi_malloc` block of at least this size has (`MI_MAX_ALIGN_SIZE` on
/// 64-bit targets).
const PLAIN_ALIGN: usize = 16;

fn plain(align: usize, size: usize) -> bool {
    align <= PLAIN_ALIGN && align <= size
}

pub struct Mimalloc;

// SAFETY: each method forwards to the mimalloc function with the same contract, with an
// alignment the chosen function guarantees; `mi_free` takes blocks from any of them.
unsafe impl GlobalAlloc for Mimalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            mi_malloc(layout.size()).cast()
        } else {
            mi_malloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if plain(layout.align(), layout.size()) {
            mi_zalloc(layout.size()).cast()
        } else {
            mi_zalloc_aligned(layout.size(), layout.align()).cast()
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        mi_free(ptr.cast::<c_void>());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if plain(layout.align(), new_size) {
            mi_realloc(ptr.cast::<c_void>(), new_size).cast()
        } else {
            mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every alignment a Rust type may ask for is honoured, by either entry, through growth and
    /// shrinking, and the contents survive a reallocation.
    #[test]
    fn blocks_have_the_asked_alignment_and_keep_their_bytes() {
        for align in [1, 2, 4, 8, 16, 32, 64, 4096] {
            for size in [align, 3 * align, 1000 * align] {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero size; each block is freed with the layout it has.
                unsafe {
                    let block = Mimalloc.alloc(layout);
                    assert!(
                        !block.is_null() && block as usize % align == 0,
                        "{layout:?}"
                    );
                    block.write_bytes(0xa5, size);
                    let grown = Mimalloc.realloc(block, layout, size * 5);
                    assert!(grown as usize % align == 0, "{layout:?} grown");
                    assert_eq!(*grown.add(size - 1), 0xa5);
                    let grown_layout = Layout::from_size_align(size * 5, align).unwrap();
                    let shrunk = Mimalloc.realloc(grown, grown_layout, align);
                    assert!(shrunk as usize % align == 0, "{layout:?} shrunk");
                    assert_eq!(*shrunk.add(align - 1), 0xa5);
                    Mimalloc.dealloc(shrunk, Layout::from_size_align(align, align).unwrap());
                    let zeroed = Mimalloc.alloc_zeroed(layout);
                    assert!(zeroed as usize % align == 0 && *zeroed.add(size - 1) == 0);
                    Mimalloc.dealloc(zeroed, layout);
                }
            }
        }
    }
}
