#[gsync::kernels]
mod m {
    #[device]
    fn settle(a: &mut [u32]) {
        if lane_id() == 0 {
            grid_sync();
        }
        a[0] = 1;
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        settle(a);
    }
}

fn main() {}
