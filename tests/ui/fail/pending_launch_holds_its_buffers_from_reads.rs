// A pending launch borrows its buffers and its Gpu until it is waited for.
use gsync::prelude::*;

#[grid_phases]
fn double(a: &mut [u32]) {
    for i in grid_stride(0..a.len()) {
        a[i] = a[i] * 2;
    }
}

fn main() -> gsync::Result<()> {
    let gpu = Gpu::emulator();
    let mut a = gpu.zeros::<u32>(16)?;
    let pending = double::submit(&gpu, &mut a)?;
    let _ = gpu.download(&a)?;
    pending.wait()?;
    Ok(())
}
