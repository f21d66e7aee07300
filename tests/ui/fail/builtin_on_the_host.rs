// The builtins' items in `gsync::dsl` document the kernel language; host code cannot call them.
use gsync::prelude::*;

fn main() {
    grid_sync();
    let lane: u32 = shfl(7u32, 0);
    let _ = (lane, global_id());
}
