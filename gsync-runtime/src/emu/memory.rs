//! Emulated device memory: elements shared by emulated threads as relaxed atomics, so that
//! threads on different host threads read and write them soundly, without locks.

use std::fmt;
use std::sync::atomic::Ordering;

use crate::emu::scalar::EmuScalar;
use crate::emu::thread::ThreadCtx;

/// Elements shared by emulated threads: relaxed atomics of the element's width (floats as
/// their bits). Global buffers, a block's shared arrays and a thread's local arrays of an
/// emulated kernel are all `EmuSlice`s; every access is bounds-checked.
///
/// An access out of bounds records the first such fault of the launch (array, index, length
/// and line, like the device's status word), which then fails with
/// [`Error::OutOfBounds`](crate::Error::OutOfBounds); the access itself is skipped, and a
/// skipped read or atomic returns zero.
#[doc(hidden)]
pub struct EmuSlice<T: EmuScalar> {
    /// A vector, not a boxed slice, so that a host vector becomes one without a copy
    /// ([`EmuSlice::from_vec`]), whatever its capacity.
    cells: Vec<T::Cell>,
}

impl<T: EmuScalar> EmuSlice<T> {
    /// `len` zeros.
    pub fn zeroed(len: usize) -> Self {
        EmuSlice { cells: (0..len).map(|_| T::default().cell()).collect() }
    }

    /// A copy of `host`.
    pub(crate) fn from_host(host: &[T]) -> Self {
        EmuSlice { cells: host.iter().map(|&value| value.cell()).collect() }
    }

    /// `host`'s elements, moved in: without a copy where an element and its cell have the
    /// same size and alignment (every element type on 64-bit hosts), else copied.
    pub(crate) fn from_vec(host: Vec<T>) -> Self {
        if !cells_match_elements::<T>() {
            return EmuSlice::from_host(&host);
        }
        let mut host = std::mem::ManuallyDrop::new(host);
        let (elements, len, capacity) = (host.as_mut_ptr(), host.len(), host.capacity());
        // SAFETY: the vector's allocation is taken over once (`host` is never dropped). A cell
        // has the element's size and alignment (checked above), so the allocation's layout is
        // that of `capacity` cells, and it holds `len` valid cells: each element's bytes are
        // its bits, which its cell stores as they are (`EmuScalar`'s promise).
        let cells = unsafe { Vec::from_raw_parts(elements.cast::<T::Cell>(), len, capacity) };
        EmuSlice { cells }
    }

    /// The elements, moved out: the inverse of [`from_vec`](Self::from_vec), without a copy
    /// where that takes none.
    pub(crate) fn into_vec(self) -> Vec<T> {
        if !cells_match_elements::<T>() {
            let mut host = vec![T::default(); self.len()];
            self.copy_to(&mut host);
            return host;
        }
        let mut cells = std::mem::ManuallyDrop::new(self.cells);
        let (cells_ptr, len, capacity) = (cells.as_mut_ptr(), cells.len(), cells.capacity());
        // SAFETY: as in `from_vec`, the other way: the allocation is laid out for `capacity`
        // elements, and each cell's bytes are a valid element's bits; the cells are owned, so
        // no thread accesses them any more.
        unsafe { Vec::from_raw_parts(cells_ptr.cast::<T>(), len, capacity) }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// Copies the elements into `out`, which has the same length.
    pub(crate) fn copy_to(&self, out: &mut [T]) {
        for (value, cell) in out.iter_mut().zip(self.cells.iter()) {
            *value = T::get(cell);
        }
    }

    /// Overwrites the elements with `host`, which has the same length.
    pub(crate) fn copy_from(&self, host: &[T]) {
        for (&value, cell) in host.iter().zip(self.cells.iter()) {
            T::set(cell, value);
        }
    }

    /// Sets every element to zero.
    pub(crate) fn fill_zeros(&self) {
        for cell in self.cells.iter() {
            T::set(cell, T::default());
        }
    }

    /// Overwrites element `index`, in bounds (an async copy landing: its span was checked when
    /// it was issued).
    pub(crate) fn set(&self, index: usize, value: T) {
        T::set(&self.cells[index], value);
    }

    /// Element `index` as the host reads it between launches; `None` out of bounds.
    pub(crate) fn get(&self, index: usize) -> Option<T> {
        self.cells.get(index).map(T::get)
    }

    /// Element `index`, read by `ctx`'s thread; `array` (the kernel's array number) and
    /// `line` name the access if it is out of bounds.
    #[inline]
    pub fn load(&self, index: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        match self.cell(index, ctx, array, line) {
            Some(cell) => T::get(cell),
            None => T::default(),
        }
    }

    /// The first element of chunk `chunk` of `n` elements (`load_chunk`, `store_chunk`), if
    /// the whole chunk is in bounds; otherwise records the fault at its last element, as the
    /// device does, and the access is skipped.
    #[inline]
    pub fn chunk_start(&self, chunk: u64, n: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> Option<u64> {
        if chunk < self.len() as u64 / n {
            Some(chunk * n)
        } else {
            let last = if chunk >= u64::MAX / n { u64::MAX } else { chunk * n + (n - 1) };
            ctx.out_of_bounds(array, last, self.len(), line);
            None
        }
    }

    /// Whether the `n` elements from `at` are in bounds (`put_range`'s target); if not, records
    /// the fault at the last of them (at `at` when there are none), as the device does.
    pub(crate) fn span_in_bounds(&self, at: u64, n: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> bool {
        let len = self.len() as u64;
        if n <= len && at <= len - n {
            return true;
        }
        let last = if n == 0 { at } else { at.saturating_add(n - 1) };
        ctx.out_of_bounds(array, last, self.len(), line);
        false
    }

    /// Whether `lo..hi` is a range of the elements (`put_range`'s source); if not, records the
    /// fault as the device does: a range that starts past its end, its start against its end.
    pub(crate) fn range_in_bounds(&self, lo: u64, hi: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> bool {
        if lo <= hi {
            return self.span_in_bounds(lo, hi - lo, ctx, array, line);
        }
        ctx.out_of_bounds(array, lo, usize::try_from(hi).unwrap_or(usize::MAX), line);
        false
    }

    /// Writes element `index`; out of bounds, records the fault and writes nothing.
    #[inline]
    pub fn store(&self, index: u64, value: T, ctx: &ThreadCtx<'_>, array: u32, line: u32) {
        if let Some(cell) = self.cell(index, ctx, array, line) {
            T::set(cell, value);
        }
    }

    /// Element `index`, read with acquire ordering (`load_acquire`).
    #[inline]
    pub fn load_acquire(&self, index: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        self.cell(index, ctx, array, line).map_or_else(T::default, T::get_acquire)
    }

    /// Writes element `index` with release ordering (`store_release`).
    #[inline]
    pub fn store_release(&self, index: u64, value: T, ctx: &ThreadCtx<'_>, array: u32, line: u32) {
        if let Some(cell) = self.cell(index, ctx, array, line) {
            T::set_release(cell, value);
        }
    }

    /// Element `index`, read atomically (`load_relaxed`). The host's atomics order it at least
    /// as an acquire load; on a GPU it orders nothing but the element itself.
    #[inline]
    pub fn load_relaxed(&self, index: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        self.load_acquire(index, ctx, array, line)
    }

    /// Writes element `index` atomically (`store_relaxed`); ordered on the host as
    /// [`store_release`](Self::store_release) is.
    #[inline]
    pub fn store_relaxed(&self, index: u64, value: T, ctx: &ThreadCtx<'_>, array: u32, line: u32) {
        self.store_release(index, value, ctx, array, line);
    }

    /// Adds `value` to element `index` (wrapping for integers) and returns the old value.
    #[inline]
    pub fn atomic_add(&self, index: u64, value: T, order: Ordering, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        self.cell(index, ctx, array, line).map_or_else(T::default, |cell| T::fetch_add(cell, value, order))
    }

    /// Stores the smaller of element `index` and `value`; returns the old value.
    #[inline]
    pub fn atomic_min(&self, index: u64, value: T, order: Ordering, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        self.cell(index, ctx, array, line).map_or_else(T::default, |cell| T::fetch_min(cell, value, order))
    }

    /// Stores the larger of element `index` and `value`; returns the old value.
    #[inline]
    pub fn atomic_max(&self, index: u64, value: T, order: Ordering, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        self.cell(index, ctx, array, line).map_or_else(T::default, |cell| T::fetch_max(cell, value, order))
    }

    /// Stores `value` in element `index`; returns the old value.
    #[inline]
    pub fn atomic_exch(&self, index: u64, value: T, order: Ordering, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> T {
        self.cell(index, ctx, array, line).map_or_else(T::default, |cell| T::swap(cell, value, order))
    }

    /// Stores `new` in element `index` if it holds `expected` (floats: bit for bit); returns
    /// the old value.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn atomic_cas(
        &self,
        index: u64,
        expected: T,
        new: T,
        order: Ordering,
        ctx: &ThreadCtx<'_>,
        array: u32,
        line: u32,
    ) -> T {
        self.cell(index, ctx, array, line).map_or_else(T::default, |cell| T::compare_swap(cell, expected, new, order))
    }

    /// Whether `index` is in bounds; if not, records the fault (a `with_lock` whose index is
    /// out of bounds skips its body).
    #[inline]
    pub fn in_bounds(&self, index: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> bool {
        self.cell(index, ctx, array, line).is_some()
    }

    /// The cell of element `index`, or `None` after recording the fault.
    #[inline]
    fn cell(&self, index: u64, ctx: &ThreadCtx<'_>, array: u32, line: u32) -> Option<&T::Cell> {
        let cell = usize::try_from(index).ok().and_then(|index| self.cells.get(index));
        if cell.is_none() {
            ctx.out_of_bounds(array, index, self.len(), line);
        }
        cell
    }
}

/// Whether `T`'s cells have `T`'s size and alignment, so that memory of one is memory of the
/// other.
fn cells_match_elements<T: EmuScalar>() -> bool {
    size_of::<T>() == size_of::<T::Cell>() && align_of::<T>() == align_of::<T::Cell>()
}

impl EmuSlice<u32> {
    /// Takes lock word `index` (in bounds) if it is free: 0 to 1, with acquire ordering.
    #[inline]
    pub fn try_lock(&self, index: u64) -> bool {
        let cell = &self.cells[index as usize];
        cell.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
    }

    /// Gives lock word `index` (in bounds) back: 0, with release ordering.
    #[inline]
    pub fn unlock(&self, index: u64) {
        self.cells[index as usize].store(0, Ordering::Release);
    }
}

impl<T: EmuScalar> fmt::Debug for EmuSlice<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EmuSlice").field("len", &self.len()).finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_copies_round_trip() {
        let slice = EmuSlice::from_host(&[1.5f32, -2.0, 3.25]);
        assert_eq!(slice.len(), 3);
        let mut out = [0.0f32; 3];
        slice.copy_to(&mut out);
        assert_eq!(out, [1.5, -2.0, 3.25]);
        slice.copy_from(&[7.0, 8.0, 9.0]);
        slice.copy_to(&mut out);
        assert_eq!(out, [7.0, 8.0, 9.0]);
        slice.fill_zeros();
        slice.copy_to(&mut out);
        assert_eq!(out, [0.0; 3]);
    }

    #[test]
    fn vectors_move_in_and_out_without_a_copy() {
        let mut host = Vec::with_capacity(8);
        host.extend([1.5f64, -2.0, 3.25]);
        let address = host.as_ptr() as usize;
        let slice = EmuSlice::from_vec(host);
        let mut out = [0.0f64; 3];
        slice.copy_to(&mut out);
        assert_eq!(out, [1.5, -2.0, 3.25]);
        slice.copy_from(&[4.0, 5.0, 6.0]);
        let back = slice.into_vec();
        assert_eq!((back.as_ptr() as usize, back.capacity()), (address, 8));
        assert_eq!(back, [4.0, 5.0, 6.0]);
    }

    #[test]
    fn vectors_of_every_width_round_trip() {
        fn round_trip<T: EmuScalar + PartialEq + std::fmt::Debug>(values: Vec<T>) {
            assert_eq!(EmuSlice::from_vec(values.clone()).into_vec(), values);
        }
        round_trip(vec![1u8, 255, 0]);
        round_trip(vec![-1i16, 7]);
        round_trip(vec![u32::MAX, 3]);
        round_trip(vec![i64::MIN, 9]);
        round_trip(vec![0.5f32, -0.0, f32::INFINITY]);
        round_trip(vec![half::f16::from_f32(0.5), half::f16::from_f32(-3.0)]);
        round_trip(vec![half::bf16::from_f32(0.25)]);
        round_trip(vec![true, false]);
        round_trip(Vec::<f32>::new());
    }

    #[test]
    fn zeroed_is_zeros_of_any_width() {
        let mut bytes = [1i8; 5];
        EmuSlice::<i8>::zeroed(5).copy_to(&mut bytes);
        assert_eq!(bytes, [0; 5]);
        let mut wide = [1.0f64; 2];
        EmuSlice::<f64>::zeroed(2).copy_to(&mut wide);
        assert_eq!(wide, [0.0; 2]);
        assert!(EmuSlice::<u16>::zeroed(0).is_empty());
    }
}
