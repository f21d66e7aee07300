//! The scalar types of kernels and the operators on them, at the bottom of the IR: the
//! constant folder and every later stage name them.

/// Rust's primitive scalar types that kernels may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    Bool,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Usize,
    F32,
    F64,
    /// IEEE binary16, the `half` crate's `f16` (CUDA's `__half`).
    F16,
    /// bfloat16, the `half` crate's `bf16` (CUDA's `__nv_bfloat16`).
    Bf16,
}

impl Scalar {
    /// Every scalar type, for lookups by name.
    pub const ALL: [Scalar; 14] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::U8,
        Scalar::I16,
        Scalar::U16,
        Scalar::I32,
        Scalar::U32,
        Scalar::I64,
        Scalar::U64,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
        Scalar::F16,
        Scalar::Bf16,
    ];

    /// The Rust spelling, which is also the CUDA spelling (the prelude has typedefs).
    pub fn name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::U8 => "u8",
            Scalar::I16 => "i16",
            Scalar::U16 => "u16",
            Scalar::I32 => "i32",
            Scalar::U32 => "u32",
            Scalar::I64 => "i64",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F16 => "f16",
            Scalar::Bf16 => "bf16",
        }
    }

    /// Looks a type up by its Rust name.
    pub fn from_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Scalar::Bool | Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::Bf16)
    }

    /// `f16` or `bf16`: floats without literals or `as` casts, whose arithmetic rounds
    /// through `f32` as the `half` crate's does (see `lower/half.rs`).
    pub fn is_half(self) -> bool {
        matches!(self, Scalar::F16 | Scalar::Bf16)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64)
    }

    /// Width in bits (`usize` is 64 bits on every CUDA target).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool | Scalar::I8 | Scalar::U8 => 8,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::Bf16 => 16,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::F64 => 64,
        }
    }

    /// The inclusive range of an integer type, as i128.
    pub fn int_range(self) -> (i128, i128) {
        let bits = self.bits();
        if self.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        }
    }
}

/// The bits of a half precision value that the IR holds as an `f64` (every half precision
/// value is one exactly; a NaN becomes the type's `NAN`).
pub fn half_bits(value: f64, ty: Scalar) -> u16 {
    match ty {
        Scalar::F16 => ::half::f16::from_f64_const(value).to_bits(),
        _ => ::half::bf16::from_f64_const(value).to_bits(),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinOp {
    pub fn is_comparison(self) -> bool {
        matches!(self, BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge)
    }
    pub fn is_shift(self) -> bool {
        matches!(self, BinOp::Shl | BinOp::Shr)
    }
    pub fn is_logical(self) -> bool {
        matches!(self, BinOp::And | BinOp::Or)
    }
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}
