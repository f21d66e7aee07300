//! Unit tests of `put_range` and `put_range_signal`: their CUDA, and their rules.

use crate::tests::{cuda, errors};
use quote::quote;

#[test]
fn a_range_put_is_a_strided_copy_through_the_peer_s_mapping_then_a_block_barrier() {
    let src = cuda(quote! {
        fn k(#[symmetric] halo: &mut [f32], edge: &[f32], n: usize) {
            halo.put_range(pe() + 1, 4, &edge[n..2 * n]);
        }
    });
    assert!(src.contains("const u32 range_pe_ = gsync_team.pe + 1u;"), "{src}");
    assert!(src.contains("const usize range_hi_ = 2ull * n_;"), "{src}");
    assert!(src.contains("// halo.put_range(range_pe, range_at, &edge[range_lo..range_hi]), line"), "{src}");
    assert!(
        src.contains("for (u64 gsync_halo_copy = gsync_linear_thread(); gsync_halo_copy < (u64)range_hi_ - (u64)range_lo_; gsync_halo_copy += gsync_block_threads())"),
        "{src}"
    );
    assert!(
        src.contains("gsync::store_relaxed_sys(gsync::on_pe(&halo_[range_at_ + gsync_halo_copy], range_pe_), edge_[range_lo_ + gsync_halo_copy]);"),
        "{src}"
    );
    assert!(src.contains("gsync::on_team(range_pe_, gsync_status, 0u,"), "{src}");
    assert!(
        src.contains("gsync::range_in_bounds((u64)range_lo_, (u64)range_hi_, gsync_edge_len, gsync_status, 1u,"),
        "{src}"
    );
    assert!(
        src.contains(
            "gsync::span_in_bounds((u64)range_at_, (u64)range_hi_ - (u64)range_lo_, gsync_halo_len, gsync_status, 0u,"
        ),
        "{src}"
    );
    assert!(src.contains("gsync_sync_block();"), "{src}");
}

#[test]
fn without_bounds_checks_only_the_pe_is_checked() {
    let (k, facts) = crate::tests::lowered(quote! {
        fn k(#[symmetric] a: &mut [u32], b: &[u32]) { a.put_range(1, 0, &b[2..]); }
    })
    .expect("no errors");
    let src = crate::emit::cuda::kernel_source(&k, &facts, false);
    assert!(src.contains("if (gsync::on_team(range_pe_, gsync_status, 0u,"), "{src}");
    assert!(!src.contains("range_in_bounds") && !src.contains("span_in_bounds"), "{src}");
    assert!(src.contains("const usize range_hi_ = gsync_b_len;"), "{src}");
}

#[test]
fn the_signal_follows_the_block_barrier_in_one_thread() {
    let src = cuda(quote! {
        fn k(#[symmetric] halo: &mut [i64], #[symmetric] flags: &mut [u32], round: u32) {
            halo.put_range_signal(pe() ^ 1, 0, &halo[8..16], flags, 1, round);
        }
    });
    let copy = src.find("gsync::store_relaxed_sys(").expect("the copy");
    let barrier = src[copy..].find("gsync_sync_block();").map(|at| copy + at).expect("a barrier after the copy");
    let one = src[barrier..].find("if (gsync_linear_thread() == 0u)").map(|at| barrier + at).expect("one thread");
    let signal =
        src[one..].find("gsync::store_release_sys(gsync::on_pe(&flags_[signal_index_], range_pe_), signal_value_)");
    assert!(signal.is_some(), "{src}");
    assert!(src.contains("// halo.put_range_signal(range_pe, range_at, &halo[range_lo..range_hi], flags, signal_index, signal_value)"), "{src}");
    // Release and acquire order the slices' plain accesses too.
    assert!(src.contains("// acquire and release order the plain accesses to these slices too"), "{src}");
}

#[test]
fn operands_are_bound_once_in_rust_s_order() {
    let src = cuda(quote! {
        fn k(#[symmetric] a: &mut [u32], b: &[u32], n: usize) {
            a.put_range(1, n - 1, &b[n / 2..n]);
        }
    });
    let order = ["range_pe_ = 1u", "range_at_ = n_ - 1ull", "range_lo_ = n_ / 2ull", "range_hi_ = n_;"];
    let at: Vec<usize> = order.iter().map(|s| src.find(s).unwrap_or_else(|| panic!("{s} in {src}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{src}");
}

#[test]
fn a_range_put_under_block_uniform_control_with_block_uniform_operands_compiles() {
    cuda(quote! {
        fn k(#[symmetric] a: &mut [u32], b: &[u32]) {
            let mut tile = shared_array::<u32, 64>();
            tile[thread_idx() as usize % 64] = b[0];
            sync_block();
            let offset = tile[3] as usize;
            if block_idx() == 0 && pe() > 0 {
                for r in 0..4u32 {
                    a.put_range(pe() - 1, offset + r as usize, &b[block_idx() as usize..]);
                }
            }
        }
    });
}

#[test]
fn thread_dependent_operands_and_control_are_refused() {
    let e = errors(quote! {
        fn k(#[symmetric] a: &mut [u32], b: &[u32]) {
            let i = thread_idx() as usize;
            a.put_range(0, i, &b[0..4]);
            a.put_range(0, 0, &b[warp_id() as usize..8]);
            if i < 4 {
                a.put_range(0, 0, &b[..]);
            }
        }
    });
    assert!(e.contains("this operand of `put_range` depends on thread identity"), "{e}");
    assert!(e.contains("this operand of `put_range` depends on warp identity"), "{e}");
    assert!(e.contains("`put_range` in control flow that depends on thread identity"), "{e}");
}

#[test]
fn a_range_put_inside_with_lock_is_refused() {
    let e = errors(quote! {
        fn k(#[symmetric] a: &mut [u32], b: &[u32], locks: &mut [u32]) {
            locks.with_lock(0, || { a.put_range(0, 0, &b[..]); });
        }
    });
    assert!(e.contains("a range put inside `with_lock`"), "{e}");
}

#[test]
fn the_split_form_carries_a_range_put_inside_a_segment_with_the_shared_array_it_copies() {
    let (k, facts) = crate::tests::lowered(quote! {
        fn k(#[symmetric] a: &mut [u32], rounds: u32) {
            let mut tile = shared_array::<u32, 64>();
            for r in 0..rounds {
                tile[thread_idx() as usize % 64] = r;
                sync_block();
                a.put_range(pe(), (r % 2) as usize * 64, &tile[..]);
                grid_sync();
            }
        }
    })
    .expect("no errors");
    let plan = crate::split::plan(&k, &facts.levels).expect("the kernel splits");
    let [segment] = &plan.segments[..] else { panic!("one segment: {plan:#?}") };
    let puts = segment.body.iter().filter(|s| matches!(s.kind, crate::ir::StmtKind::PutRange(_))).count();
    assert_eq!(puts, 1, "{plan:#?}");
    let tile = k.arrays.iter().position(|a| a.name == "tile").expect("the tile");
    assert_eq!(segment.shared, [crate::ir::ArrayId(tile)], "{plan:#?}");
    let host: Vec<&str> = segment.host_values.iter().map(|v| k.var(*v).name.as_str()).collect();
    assert!(host.contains(&"range_at"), "the uniform operand comes from the host: {host:?}");
    let src = crate::emit::cuda::split_source(&k, &facts, &plan, true);
    assert!(src.contains("gsync::store_relaxed_sys(gsync::on_pe(&a_[range_at_ + gsync_a_copy], range_pe_), tile_[range_lo_ + gsync_a_copy]);"), "{src}");
}
