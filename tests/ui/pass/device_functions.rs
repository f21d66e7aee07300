//! The README's kernel module expands, and its generic kernel runs on the emulator.
use gsync::prelude::*;

#[gsync::kernels]
mod reductions {
    #[device]
    fn strided_sum<T: Num>(a: &[T]) -> T {
        let mut sum = T::ZERO;
        for i in grid_stride(0..a.len()) {
            sum = sum + a[i];
        }
        sum
    }

    #[grid_phases]
    pub fn total<T: Float>(a: &[T], out: &mut [T]) {
        let mine = strided_sum(a);
        out.atomic_add(0, mine);
    }
}

fn main() {
    let gpu = Gpu::emulator();
    let a = gpu.upload(&[1.0f64, 2.0, 3.0, 4.0]).unwrap();
    let mut out = gpu.zeros::<f64>(1).unwrap();
    reductions::total::launch(&gpu, &a, &mut out).unwrap();
    assert_eq!(gpu.download(&out).unwrap(), [10.0]);
}
