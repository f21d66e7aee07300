//! Kernels and CPU references shared by the codegen test (NVRTC, everywhere)
//! and the GPU tests.
#![allow(dead_code)]

pub mod checks;
pub mod kernels;
