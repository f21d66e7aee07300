// Refused: a call of a device function that shuffles, under thread-varying control.
#[gsync::kernels]
mod m {
    #[device]
    fn neighbour(v: u32) -> u32 {
        shfl_xor(v, 1)
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        if thread_idx() == 0 {
            a[0] = neighbour(a[1]);
        }
    }
}

fn main() {}
