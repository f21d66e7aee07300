fn main() { print!("{}", gsync::kernels::smooth::cuda_source()); }
