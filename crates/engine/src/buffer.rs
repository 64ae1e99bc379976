//! Buffers aligned for O_DIRECT.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// A zeroed heap buffer whose start is aligned to a power of two, as O_DIRECT requires
/// (`stx_dio_mem_align`). Hand-written because `Vec<u8>` cannot promise alignment and an
/// extra crate for ~40 lines is not worth it.
#[derive(Debug)]
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: the buffer owns its memory exclusively, like a Vec<u8>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared access only hands out &[u8].
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// A zeroed buffer of `len` bytes (at least 1) aligned to `align` (a power of two;
    /// raised to 8 if smaller).
    ///
    /// # Panics
    /// If `align` is not a power of two or the size overflows, or memory is exhausted.
    pub fn new(len: usize, align: usize) -> Self {
        #[allow(clippy::expect_used)] // callers pass page-size powers of two
        let layout = Layout::from_size_align(len.max(1), align.max(8)).expect("power-of-two alignment");
        // SAFETY: layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(raw) else { std::alloc::handle_alloc_error(layout) };
        Self { ptr, layout }
    }

    /// The whole buffer.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised (zeroed) bytes while self lives.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    /// The whole buffer, mutable.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.layout.size()
    }

    /// Never true: a buffer holds at least one byte.
    pub fn is_empty(&self) -> bool {
        false
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in new() with this very layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

/// One aligned buffer per queue slot, in one allocation: slot `i` is the `i`-th stretch of
/// `slot_len` bytes, each stretch starting on the alignment (so O_DIRECT accepts every slot).
#[derive(Debug)]
pub struct SlotBuffers {
    buf: AlignedBuf,
    /// Distance between slot starts: `slot_len` rounded up to the alignment.
    stride: usize,
    slot_len: usize,
    slots: u32,
}

impl SlotBuffers {
    /// `slots` zeroed buffers (at least 1) of `slot_len` bytes aligned to `align`.
    pub fn new(slots: u32, slot_len: usize, align: usize) -> Self {
        let align = align.max(8);
        let stride = slot_len.max(1).next_multiple_of(align);
        let slots = slots.max(1);
        Self { buf: AlignedBuf::new(stride * slots as usize, align), stride, slot_len: slot_len.max(1), slots }
    }

    /// Number of slots.
    pub fn slots(&self) -> u32 {
        self.slots
    }

    /// Bytes per slot.
    pub fn slot_len(&self) -> usize {
        self.slot_len
    }

    /// Slot `i`.
    ///
    /// # Panics
    /// If `i` is not below [`SlotBuffers::slots`]: slots come from the caller's own queue of
    /// that size, so this is a bug, not an input.
    #[inline]
    pub fn slot(&self, i: u32) -> &[u8] {
        let start = i as usize * self.stride;
        &self.buf.as_slice()[start..start + self.slot_len]
    }

    /// Slot `i`, mutable.
    ///
    /// # Panics
    /// As [`SlotBuffers::slot`].
    #[inline]
    pub fn slot_mut(&mut self, i: u32) -> &mut [u8] {
        let start = i as usize * self.stride;
        &mut self.buf.as_mut_slice()[start..start + self.slot_len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        for align in [512usize, 4096, 65536] {
            let b = AlignedBuf::new(12345, align);
            assert_eq!(b.as_slice().as_ptr() as usize % align, 0);
            assert_eq!(b.len(), 12345);
            assert!(b.as_slice().iter().all(|&x| x == 0));
        }
    }

    #[test]
    fn slots_are_aligned_and_disjoint() {
        let mut s = SlotBuffers::new(4, 5000, 4096);
        assert_eq!((s.slots(), s.slot_len()), (4, 5000));
        for i in 0..4 {
            assert_eq!(s.slot(i).as_ptr() as usize % 4096, 0);
            s.slot_mut(i).fill(i as u8 + 1);
        }
        for i in 0..4 {
            assert!(s.slot(i).iter().all(|&x| x == i as u8 + 1), "slot {i} was overwritten");
        }
    }
}
