// Refused: a call of a device function that runs `grid_sync()`, under block-varying control.
#[gsync::kernels]
mod m {
    #[device]
    fn publish(a: &mut [u32]) {
        a[0] = 1;
        grid_sync();
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        if block_idx() == 0 {
            publish(a);
        }
    }
}

fn main() {}
