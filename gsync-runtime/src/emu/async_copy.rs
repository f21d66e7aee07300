//! Async copies on the emulator (`copy_chunk_async`, `wait_async_copies`): a copy reads its
//! source when the thread issues it, fills its target with the complement of every element it
//! copies, and writes the elements only at the thread's next wait. A GPU may show the old
//! elements or the new ones until then; a kernel that reads the target in between (its own
//! thread before the wait, or any other thread before the wait and a barrier) reads neither on
//! the emulator, and its results show it. A GPU may also read the source at any time until the
//! wait: a copy whose source changed meanwhile lands what it read at the issue, one of the
//! values a GPU could copy, and the wait reports it, so that the launch fails with that race
//! rather than with whatever other values would lead the kernel to. A write of the value the
//! source already held, or one undone before the wait, changes nothing and goes unreported.

use crate::emu::memory::EmuSlice;
use crate::emu::scalar::EmuScalar;

/// One copy in flight: lands the elements it read into its target, and returns the first
/// source element that changed since, if any.
type InFlight<'a> = Box<dyn FnOnce() -> Option<SourceWritten> + Send + 'a>;

/// A copy's source element changed while the copy was in flight.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceWritten {
    /// The kernel's number of the source array.
    pub array: u32,
    /// The element that changed.
    pub index: u64,
    /// The Rust source line of the copy.
    pub line: u32,
}

/// A thread's async copies in flight, in the order it issued them.
#[doc(hidden)]
#[derive(Default)]
pub struct EmuAsyncCopies<'a> {
    in_flight: Vec<InFlight<'a>>,
}

impl<'a> EmuAsyncCopies<'a> {
    /// Issues the copy of `n` elements of `source` (the kernel's array `array`) from `from` into
    /// `target` from `at`, both spans in bounds (the caller checked them as chunks), on Rust
    /// source line `line`.
    #[allow(clippy::too_many_arguments)]
    pub fn issue<T: EmuScalar>(
        &mut self,
        target: &'a EmuSlice<T>,
        at: u64,
        source: &'a EmuSlice<T>,
        from: u64,
        n: u64,
        array: u32,
        line: u32,
    ) {
        let read = |i: u64| source.get(i as usize).expect("the source chunk was checked");
        let values: Vec<T> = (from..from + n).map(read).collect();
        let at = at as usize;
        for (j, value) in values.iter().enumerate() {
            target.set(at + j, value.complement());
        }
        let land = move || {
            let changed = (from..from + n).zip(&values).find(|&(i, &value)| !read(i).same_bits(value));
            let changed = changed.map(|(index, _)| SourceWritten { array, index, line });
            for (j, value) in values.into_iter().enumerate() {
                target.set(at + j, value);
            }
            changed
        };
        self.in_flight.push(Box::new(land));
    }

    /// `wait_async_copies()`: every copy issued so far lands; the first whose source changed
    /// while it was in flight is returned.
    pub fn wait(&mut self) -> Option<SourceWritten> {
        // Every copy lands, so none may be skipped once one has changed.
        self.in_flight.drain(..).map(|copy| copy()).fold(None, |first, changed| first.or(changed))
    }
}

impl std::fmt::Debug for EmuAsyncCopies<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmuAsyncCopies").field("in_flight", &self.in_flight.len()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_lands_at_the_wait_and_not_before() {
        let (source, target) = (EmuSlice::from_host(&[1u32, 2, 3, 4]), EmuSlice::<u32>::zeroed(4));
        let mut copies = EmuAsyncCopies::default();
        copies.issue(&target, 2, &source, 1, 2, 0, 10);
        assert_eq!((target.get(2), target.get(3)), (Some(!2), Some(!3)), "in flight: neither old nor new");
        assert_eq!(copies.wait(), None);
        assert_eq!((0..4).map(|i| target.get(i).unwrap()).collect::<Vec<_>>(), [0, 0, 2, 3]);
        assert_eq!(copies.wait(), None);
        assert_eq!(target.get(2), Some(2), "a second wait lands nothing again");
    }

    #[test]
    fn a_copy_whose_source_changed_in_flight_lands_what_it_read_and_says_where() {
        let (source, target) = (EmuSlice::from_host(&[1u32, 2, 3, 4]), EmuSlice::<u32>::zeroed(4));
        let mut copies = EmuAsyncCopies::default();
        copies.issue(&target, 0, &source, 0, 2, 5, 30);
        copies.issue(&target, 2, &source, 2, 2, 5, 31);
        source.set(3, 9);
        assert_eq!(copies.wait(), Some(SourceWritten { array: 5, index: 3, line: 31 }));
        assert_eq!((0..4).map(|i| target.get(i).unwrap()).collect::<Vec<_>>(), [1, 2, 3, 4]);
        source.set(3, 4);
        assert_eq!(copies.wait(), None, "the wait ended the copy: a later write is no race");
    }
}
