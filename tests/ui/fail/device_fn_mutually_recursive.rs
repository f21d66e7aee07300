// Refused: device functions that call each other in a cycle (`ping` -> `pong` -> `ping`).
#[gsync::kernels]
mod m {
    #[device]
    fn ping(n: u32) -> u32 {
        if n == 0 { 0 } else { pong(n - 1) }
    }

    #[device]
    fn pong(n: u32) -> u32 {
        if n == 0 { 1 } else { ping(n - 1) }
    }

    #[grid_phases]
    fn k(a: &mut [u32]) {
        a[0] = ping(a[1]);
    }
}

fn main() {}
