//! The error a failed `assert!` of a kernel becomes.

use crate::core::error::Error;
use crate::core::kernel::KernelSpec;

/// The error of assertion `number` of `kernel`, failed on Rust source line `line`, with its
/// operands' bits (for `assert_eq!` and `assert_ne!`).
pub(crate) fn failed(kernel: &KernelSpec, number: u32, line: u32, left: u64, right: u64) -> Error {
    let assertion = usize::try_from(number).ok().and_then(|n| kernel.assertions.get(n));
    let message = assertion.map_or_else(|| format!("assertion #{number} failed"), |a| a.message.to_owned());
    let values = assertion
        .and_then(|a| a.operands)
        .map(|ty| format!("; left: {}, right: {}", operand(ty, left), operand(ty, right)))
        .unwrap_or_default();
    Error::AssertionFailed { kernel: kernel.name.to_owned(), line, message, values }
}

/// An operand of type `ty` from the bits the device wrote, as Rust's `{:?}` prints it.
fn operand(ty: &str, bits: u64) -> String {
    match ty {
        "bool" => format!("{:?}", bits != 0),
        "i8" => format!("{:?}", bits as u8 as i8),
        "u8" => format!("{:?}", bits as u8),
        "i16" => format!("{:?}", bits as u16 as i16),
        "u16" => format!("{:?}", bits as u16),
        "i32" => format!("{:?}", bits as u32 as i32),
        "u32" => format!("{:?}", bits as u32),
        "i64" => format!("{:?}", bits as i64),
        "f32" => format!("{:?}", f32::from_bits(bits as u32)),
        "f64" => format!("{:?}", f64::from_bits(bits)),
        _ => format!("{bits:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::assertion::KernelAssertion;
    use crate::core::kernel::tests::SMOOTH;

    static CHECKED: KernelSpec = KernelSpec {
        assertions: &[
            KernelAssertion { message: "assertion failed: n > 0", operands: None },
            KernelAssertion { message: "assertion `left == right` failed: sums differ", operands: Some("i32") },
        ],
        ..SMOOTH
    };

    #[test]
    fn a_failed_assertion_names_its_message_and_line() {
        let error = failed(&CHECKED, 0, 7, 0, 0);
        assert!(matches!(&error, Error::AssertionFailed { line: 7, values, .. } if values.is_empty()), "{error:?}");
        assert!(
            error.to_string().starts_with("kernel `smooth` panicked at line 7: assertion failed: n > 0;"),
            "{error}"
        );
    }

    #[test]
    fn assert_eq_operands_print_as_their_type() {
        let error = failed(&CHECKED, 1, 9, u64::from((-3i32) as u32), 4);
        let text = error.to_string();
        assert!(text.contains("assertion `left == right` failed: sums differ; left: -3, right: 4"), "{text}");
        assert_eq!(operand("f32", u64::from(1.5f32.to_bits())), "1.5");
        assert_eq!(operand("f64", (-0.0f64).to_bits()), "-0.0");
        assert_eq!(operand("bool", 1), "true");
        assert_eq!(operand("i8", 0xff), "-1");
        assert_eq!(operand("usize", 7), "7");
    }

    #[test]
    fn an_unknown_assertion_number_still_reports() {
        let error = failed(&SMOOTH, 3, 2, 0, 0);
        assert!(error.to_string().contains("assertion #3 failed"), "{error}");
    }
}
