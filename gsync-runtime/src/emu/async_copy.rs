//! Async copies on the emulator (`copy_chunk_async`, `wait_async_copies`): a copy reads its
//! source when the thread issues it, fills its target with the complement of every element it
//! copies, and writes the elements only at the thread's next wait. A GPU may show the old
//! elements or the new ones until then; a kernel that reads the target in between (its own
//! thread before the wait, or any other thread before the wait and a barrier) reads neither on
//! the emulator, and its results show it.

use crate::emu::memory::EmuSlice;
use crate::emu::scalar::EmuScalar;

/// One copy in flight: writes the elements it read into its target.
type InFlight<'a> = Box<dyn FnOnce() + Send + 'a>;

/// A thread's async copies in flight, in the order it issued them.
#[doc(hidden)]
#[derive(Default)]
pub struct EmuAsyncCopies<'a> {
    in_flight: Vec<InFlight<'a>>,
}

impl<'a> EmuAsyncCopies<'a> {
    /// Issues the copy of `n` elements of `source` from `from` into `target` from `at`, both
    /// spans in bounds (the caller checked them as chunks).
    pub fn issue<T: EmuScalar>(&mut self, target: &'a EmuSlice<T>, at: u64, source: &EmuSlice<T>, from: u64, n: u64) {
        let values: Vec<T> =
            (from..from + n).map(|i| source.get(i as usize).expect("the source chunk was checked")).collect();
        let at = at as usize;
        for (j, value) in values.iter().enumerate() {
            target.set(at + j, value.complement());
        }
        self.in_flight.push(Box::new(move || {
            for (j, value) in values.into_iter().enumerate() {
                target.set(at + j, value);
            }
        }));
    }

    /// `wait_async_copies()`: every copy issued so far lands.
    pub fn wait(&mut self) {
        for copy in self.in_flight.drain(..) {
            copy();
        }
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
    fn a_copy_reads_its_source_at_once_and_lands_at_the_wait() {
        let (source, target) = (EmuSlice::from_host(&[1u32, 2, 3, 4]), EmuSlice::<u32>::zeroed(4));
        let mut copies = EmuAsyncCopies::default();
        copies.issue(&target, 2, &source, 1, 2);
        source.copy_from(&[9, 9, 9, 9]);
        assert_eq!((target.get(2), target.get(3)), (Some(!2), Some(!3)), "in flight: neither old nor new");
        copies.wait();
        assert_eq!((0..4).map(|i| target.get(i).unwrap()).collect::<Vec<_>>(), [0, 0, 2, 3]);
        copies.wait();
        assert_eq!(target.get(2), Some(2), "a second wait lands nothing again");
    }
}
