#[gsync::kernels]
mod m {
    #[device]
    fn settle(a: &mut [u32]) {
        a[0] = 1;
        sync_block();
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        if thread_idx() == 0 {
            settle(a);
        }
    }
}

fn main() {}
