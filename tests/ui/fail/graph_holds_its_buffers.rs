// A graph of captured launches borrows their buffers for as long as it lives.
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
    let capture = gpu.capture()?;
    let recorded = double::submit(capture.gpu(), &mut a)?;
    let graph = capture.finish(vec![recorded])?;
    let _ = gpu.download(&a)?;
    graph.replay()?;
    Ok(())
}
