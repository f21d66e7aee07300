//! The warps of an emulated block: the slots through which their lanes shuffle values.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8};

/// Lanes in a warp.
pub(crate) const WARP_SIZE: u32 = 32;

/// What a block's threads share besides memory: each warp's shuffle slots.
pub(crate) struct BlockSync {
    warps: Box<[WarpSlots]>,
}

impl BlockSync {
    /// The slots of a block of `threads` threads.
    pub(crate) fn new(threads: u32) -> Self {
        BlockSync { warps: (0..threads.div_ceil(WARP_SIZE)).map(|_| WarpSlots::default()).collect() }
    }

    /// The slots of the warp of thread `thread`.
    pub(crate) fn warp(&self, thread: u32) -> &WarpSlots {
        &self.warps[(thread / WARP_SIZE) as usize]
    }
}

/// A warp's shuffle exchange: each lane deposits its value, the scheduler releases the warp
/// once every unfinished lane has, then each lane reads its source lane's value.
///
/// Exchanges alternate between two slot sets: a lane that has read may go on to its next
/// shuffle and deposit while slower lanes still read the last exchange's slots, but it cannot
/// get two exchanges ahead, since the next release waits for every lane.
#[derive(Default)]
pub(crate) struct WarpSlots {
    values: [[AtomicU64; WARP_SIZE as usize]; 2],
    /// The lanes that deposited in each slot set's last exchange.
    present: [AtomicU32; 2],
    /// The slot set of the exchange under way.
    current: AtomicU8,
}

impl WarpSlots {
    /// Deposits `lane`'s value for the exchange under way; returns the exchange's slot set.
    pub(crate) fn deposit(&self, lane: u32, bits: u64) -> usize {
        let set = usize::from(self.current.load(Relaxed) & 1);
        self.values[set][lane as usize].store(bits, Relaxed);
        set
    }

    /// The value `source` deposited in slot set `set`, if it took part in that exchange.
    pub(crate) fn collect(&self, set: usize, source: u32) -> Option<u64> {
        let took_part = self.present[set].load(Relaxed) & (1 << source) != 0;
        took_part.then(|| self.values[set][source as usize].load(Relaxed))
    }

    /// The lanes (a bit per lane) that took part in slot set `set`'s last exchange.
    pub(crate) fn lanes(&self, set: usize) -> u32 {
        self.present[set].load(Relaxed)
    }

    /// Ends the exchange under way, in which `lanes` (a bit per lane) deposited.
    pub(crate) fn release(&self, lanes: u32) {
        let set = self.current.load(Relaxed) & 1;
        self.present[usize::from(set)].store(lanes, Relaxed);
        self.current.store(set ^ 1, Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warp_exchanges_alternate_slot_sets_and_remember_who_took_part() {
        let warp = WarpSlots::default();
        assert_eq!(warp.deposit(0, 10), 0);
        assert_eq!(warp.deposit(1, 11), 0);
        warp.release(0b11);
        // Lane 0 read and went on to its next shuffle before lane 1 read the first one.
        assert_eq!(warp.deposit(0, 20), 1);
        assert_eq!(warp.collect(0, 0), Some(10));
        assert_eq!(warp.collect(0, 2), None, "lane 2 took no part");
        warp.release(0b1);
        assert_eq!(warp.collect(1, 0), Some(20));
        assert_eq!(warp.collect(1, 1), None, "lane 1 finished before the second exchange");
    }

    #[test]
    fn a_partial_last_warp_gets_its_own_slots() {
        let sync = BlockSync::new(40);
        assert_eq!(sync.warps.len(), 2);
        assert!(std::ptr::eq(sync.warp(39), &sync.warps[1]));
    }
}
