//! Values that forked job processes and their parent share: an array in a MAP_SHARED
//! anonymous mapping, made before the fork, so that a write on either side is seen on the
//! other (the steady-state slots, the flows). Threads share it all the same.

/// A type whose all-zero bytes are a valid value, and which holds only atomics: what a
/// shared mapping may hold (it starts zeroed, and both sides write it at once).
///
/// # Safety
/// Implement it only for such types.
pub(crate) unsafe trait SharedZeroed: Sync {}

/// `len` values of `T`, zeroed, in one MAP_SHARED anonymous mapping, unmapped on drop.
pub(crate) struct SharedArray<T: SharedZeroed> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: T holds only atomics (SharedZeroed), and the mapping lives until Drop.
unsafe impl<T: SharedZeroed> Sync for SharedArray<T> {}
// SAFETY: likewise; the pointer is the mapping's, owned by this value.
unsafe impl<T: SharedZeroed> Send for SharedArray<T> {}

impl<T: SharedZeroed> SharedArray<T> {
    /// `len` zeroed values (at least one page is mapped, even for none).
    pub(crate) fn zeroed(len: usize) -> std::io::Result<Self> {
        // SAFETY: a fresh anonymous shared mapping; zeroed pages are valid Ts (SharedZeroed).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                Self::bytes(len),
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Self { ptr: ptr.cast(), len })
    }

    fn bytes(len: usize) -> usize {
        std::mem::size_of::<T>() * len.max(1)
    }

    /// Value `i`.
    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        // SAFETY: in bounds, and the mapping lives as long as self.
        (i < self.len).then(|| unsafe { &*self.ptr.add(i) })
    }

    /// How many values it holds.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl<T: SharedZeroed> Drop for SharedArray<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `zeroed`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), Self::bytes(self.len)) };
    }
}
