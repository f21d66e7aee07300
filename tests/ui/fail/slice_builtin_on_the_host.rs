// The slice methods' items in `gsync::dsl` (`SliceBuiltins`) document the kernel language; host code cannot call them.
use gsync::prelude::*;

fn main() {
    let mut counts = vec![0u32; 4];
    counts.atomic_add(0, 1);
}
