// Refused: a call of a device function that votes, under thread-varying control.
#[gsync::kernels]
mod m {
    #[device]
    fn voters(p: bool) -> u32 {
        ballot(p)
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        if thread_idx() == 0 {
            a[0] = voters(a[1] > 0);
        }
    }
}

fn main() {}
