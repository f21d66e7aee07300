//! Stage 4: emitters walking the typed IR.

pub mod cuda;
pub mod driver;
pub mod host;
