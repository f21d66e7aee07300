//! Room on the stack for deep kernels. A 3000-term `x + x + … + x` or
//! hundreds of nested parentheses make every walk (lowering, the checks,
//! the emitters, the splitter) recurse once per level; each recursive
//! function runs its body through [`deep`], which continues on a fresh
//! heap-allocated stack segment when the current one runs low, as rustc
//! does. (A proc macro cannot move the work to a thread with a larger
//! stack: its `proc_macro` values belong to the macro's thread.)

/// Stack that one level of any walk may need before its next check; frames
/// of unoptimized builds are large.
const RED_ZONE: usize = 128 * 1024;

/// The size of each new segment.
const SEGMENT: usize = 4 * 1024 * 1024;

/// Stack the whole expansion starts with, for the recursion inside syn
/// (parsing, cloning and dropping syntax trees), which has no checks of its own.
const EXPANSION: usize = 16 * 1024 * 1024;

/// Runs one level of a recursive walk.
#[inline]
pub fn deep<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(RED_ZONE, SEGMENT, f)
}

/// Runs the whole expansion with at least [`EXPANSION`] bytes of stack.
pub fn expansion<R>(f: impl FnOnce() -> R) -> R {
    stacker::maybe_grow(EXPANSION, EXPANSION, f)
}
