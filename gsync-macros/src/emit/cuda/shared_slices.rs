//! Shared slices (`shared_slice::<T>(len)`) in CUDA: views into the block's one
//! `extern __shared__` buffer, at the byte offsets the runtime lays them out at, with the
//! lengths the host computed at launch. Both come in as parameters after the kernel's own
//! (and a segment's host values), in declaration order: `gsync_<name>_len`, then
//! `gsync_<name>_offset`.

use crate::emit::cuda_names;
use crate::ir::*;
use crate::names;

/// The C name of the dynamic shared memory buffer.
const BUFFER: &str = "gsync_shared_slices";

/// The kernel's parameters for its shared slices.
pub fn params(k: &Kernel) -> Vec<String> {
    k.shared_slices
        .iter()
        .flat_map(|decl| {
            let name = cuda_names::array(k, decl.array);
            [
                format!("const usize {}", names::generated(&name, "len")),
                format!("const usize {}", names::generated(&name, "offset")),
            ]
        })
        .collect()
}

/// The declarations, at the top of a function, of the shared slices among `used`.
pub fn declarations(k: &Kernel, used: &[ArrayId]) -> Vec<String> {
    let slices: Vec<&SharedSliceDecl> = k.shared_slices.iter().filter(|decl| used.contains(&decl.array)).collect();
    if slices.is_empty() {
        return Vec::new();
    }
    // 16 bytes: more than any element's alignment, which each slice's offset keeps.
    let mut lines = vec![format!("extern __shared__ __align__(16) unsigned char {BUFFER}[];")];
    for decl in slices {
        let (a, name) = (k.array(decl.array), cuda_names::array(k, decl.array));
        let offset = names::generated(&name, "offset");
        let ty = a.elem.name();
        lines.push(format!(
            "{ty}* const {name} = reinterpret_cast<{ty}*>({BUFFER} + {offset});  // shared_slice, line {}",
            decl.line
        ));
    }
    lines
}
