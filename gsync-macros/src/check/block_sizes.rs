//! The block sizes a kernel cannot run with. Its constants sized by `BLOCK_SIZE`
//! ([`UsedBlockConst`]) are evaluated at every block size a GPU allows, so that the runtime can
//! refuse, before compiling anything, a block size for which rustc's evaluation would fail,
//! an array length would not be positive, or the arrays would not fit. A kernel that no block
//! size can run is an error.

use super::sizes::{LOCAL_LIMIT, SHARED_LIMIT};
use crate::diagnostics::Diagnostics;
use crate::ir::{Array, ArraySpace, ConstValue, Kernel, UsedBlockConst};
use gsync_contract::MAX_BLOCK_SIZE;

/// The block sizes `k` cannot run with, or `None` after reporting that it can run with none
/// (on the first use of a constant sized by `BLOCK_SIZE`).
pub fn check(k: &Kernel, diag: &mut Diagnostics) -> Option<Vec<RefusedBlockSizes>> {
    let refused_block_sizes = refused_block_sizes(k, &k.block_consts);
    let refused: u32 = refused_block_sizes.iter().map(|r| r.last - r.first + 1).sum();
    if let (MAX_BLOCK_SIZE, Some(first)) = (refused, refused_block_sizes.first()) {
        let span = k.block_consts.first().map_or_else(proc_macro2::Span::call_site, |c| c.span);
        diag.error(span, format!("the kernel cannot run with any block size: {}", first.reason));
        return None;
    }
    Some(refused_block_sizes)
}

/// Block sizes `first..=last` a kernel cannot run with, and why (the same reason for each):
/// the contract's ranges, with the reason built as it is checked.
pub type RefusedBlockSizes = gsync_contract::RefusedBlockSizes<String>;

/// The block sizes `k` cannot run with: where one of its constants sized by the block size
/// fails to evaluate, an array length is not positive, or its shared (local) arrays need more
/// than a block (thread) can have. Consecutive sizes refused for the same reason form one
/// range. Empty for a kernel that does not read `BLOCK_SIZE`.
fn refused_block_sizes(k: &Kernel, used: &[UsedBlockConst]) -> Vec<RefusedBlockSizes> {
    let mut refused: Vec<RefusedBlockSizes> = Vec::new();
    if used.is_empty() {
        return refused;
    }
    for threads in 1..=MAX_BLOCK_SIZE {
        let Some(reason) = refusal(k, used, threads) else { continue };
        if let Some(range) = RefusedBlockSizes::record(refused.last_mut(), threads, reason) {
            refused.push(range);
        }
    }
    refused
}

/// Why `k` cannot run with blocks of `threads` threads, if it cannot.
fn refusal(k: &Kernel, used: &[UsedBlockConst], threads: u32) -> Option<String> {
    for c in used {
        match c.value.eval(threads) {
            Err(message) => return Some(format!("{} fails: {message}", c.what)),
            Ok(ConstValue::Int(n)) if c.length && n <= 0 => {
                return Some(format!("{} is not positive, as an array length must be", c.what))
            }
            Ok(_) => {}
        }
    }
    for (space, max, whose) in [
        (ArraySpace::Shared, SHARED_LIMIT, "shared arrays of a block"),
        (ArraySpace::Local, LOCAL_LIMIT, "arrays of a thread"),
    ] {
        let bytes: u64 = k.arrays.iter().filter(|a| a.space == space).map(|a| array_bytes(a, threads)).sum();
        if bytes > max {
            return Some(format!("the {whose} need more than the {max} bytes ({} KiB) CUDA allows", max / 1024));
        }
    }
    None
}

/// The bytes of array `a` with blocks of `threads` threads.
fn array_bytes(a: &Array, threads: u32) -> u64 {
    let len = match (&a.len, &a.block_len) {
        (Some(n), _) => *n,
        (None, Some(c)) => match c.eval(threads) {
            Ok(ConstValue::Int(n)) => u64::try_from(n).unwrap_or(0),
            _ => 0,
        },
        (None, None) => 0,
    };
    len.saturating_mul(u64::from(a.elem.bits() / 8))
}
