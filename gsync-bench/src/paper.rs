//! The research paper's setting and the numbers it reports, exactly as printed:
//! Savadi, Salavatizadeh, Riahi, "Improving the inter-block synchronization
//! methods in CUDA" (Tables 3–5 and Section 4).

use crate::model::Workload;

/// The paper's block size: 32 threads per block.
pub const BLOCK_SIZE: u32 = 32;

/// The smallest grid the paper measures.
pub const FIRST_BLOCKS: u32 = 7;

/// The largest grid the paper measures.
pub const LAST_BLOCKS: u32 = 60;

/// The paper's ILBS group count ("6 groups were chosen").
pub const ILBS_GROUPS: u32 = 6;

/// The paper's machine (Table 3).
pub const MACHINE: &str = "NVIDIA GTX 1070 (15 SMs × 128 cores, 8 GB, 2 MB L2), CUDA 9.2";

/// The unit of the times in Tables 4 and 5: the tables name none; the text
/// says execution times are in seconds.
pub const TIME_UNIT: &str = "not stated in its tables (its text says seconds)";

/// One row of Table 4 or 5: a band of grid sizes and the mean times in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PaperBand {
    /// The band's first block count.
    pub first: u32,
    /// The band's last block count (inclusive).
    pub last: u32,
    /// LBS time, as printed.
    pub t_lbs: f64,
    /// ILBS time (6 groups), as printed.
    pub t_ilbs: f64,
    /// The printed speedup t_LBS / t_ILBS.
    pub speedup: f64,
}

impl PaperBand {
    /// Whether `blocks` lies in this band.
    pub fn contains(&self, blocks: u32) -> bool {
        (self.first..=self.last).contains(&blocks)
    }

    /// The band as the paper writes it, e.g. "7–15".
    pub fn label(&self) -> String {
        format!("{}–{}", self.first, self.last)
    }
}

const fn band(first: u32, last: u32, t_lbs: f64, t_ilbs: f64, speedup: f64) -> PaperBand {
    PaperBand { first, last, t_lbs, t_ilbs, speedup }
}

/// Table 4: ILBS over LBS on Smith-Waterman.
pub const TABLE_4: [PaperBand; 6] = [
    band(7, 15, 38.11, 29.66, 1.28),
    band(16, 24, 61.0, 43.65, 1.39),
    band(25, 33, 84.88, 50.67, 1.67),
    band(34, 42, 102.72, 50.77, 1.84),
    band(43, 51, 111.72, 66.43, 1.68),
    band(52, 60, 137.37, 91.65, 1.49),
];

/// Table 5: ILBS over LBS on bitonic sort.
pub const TABLE_5: [PaperBand; 6] = [
    band(7, 15, 0.41, 0.245, 1.67),
    band(16, 24, 0.66, 0.33, 2.00),
    band(25, 33, 0.8, 0.46, 1.70),
    band(34, 42, 1.3, 0.58, 2.24),
    band(43, 51, 1.51, 0.7, 2.15),
    band(52, 60, 1.83, 0.97, 1.90),
];

/// The paper's table for a workload: Table 4 or Table 5.
pub fn table(workload: Workload) -> Option<&'static [PaperBand; 6]> {
    match workload {
        Workload::SmithWaterman => Some(&TABLE_4),
        Workload::Bitonic => Some(&TABLE_5),
        Workload::EmptyPhases => None,
    }
}

/// The paper's table number for a workload.
pub fn table_number(workload: Workload) -> Option<u32> {
    match workload {
        Workload::SmithWaterman => Some(4),
        Workload::Bitonic => Some(5),
        Workload::EmptyPhases => None,
    }
}

/// How much more time ULFS at 33 blocks takes than LFS just below, as a
/// fraction (Section 4: 46.8% for Smith-Waterman, 34% for bitonic).
pub fn ulfs_jump(workload: Workload) -> Option<f64> {
    match workload {
        Workload::SmithWaterman => Some(0.468),
        Workload::Bitonic => Some(0.34),
        Workload::EmptyPhases => None,
    }
}

/// The paper's figure numbers for a workload: (LBS vs ILBS, LFS vs ULFS, ILBS vs ULFS).
pub fn figures(workload: Workload) -> Option<(u32, u32, u32)> {
    match workload {
        Workload::SmithWaterman => Some((7, 9, 11)),
        Workload::Bitonic => Some((8, 10, 12)),
        Workload::EmptyPhases => None,
    }
}

/// Rows whose printed speedup differs from the ratio of their printed times by
/// more than rounding explains (0.05), in words for the report.
pub fn inconsistencies() -> Vec<String> {
    let mut notes = Vec::new();
    for (number, table) in [(4, &TABLE_4), (5, &TABLE_5)] {
        for band in table.iter() {
            let ratio = band.t_lbs / band.t_ilbs;
            if (ratio - band.speedup).abs() > 0.05 {
                notes.push(format!(
                    "Table {number}, {}: the printed times give {} / {} = {ratio:.2}, but the printed speedup is {:.2}",
                    band.label(),
                    band.t_lbs,
                    band.t_ilbs,
                    band.speedup
                ));
            }
        }
    }
    notes
}

/// The grid sizes the paper measures: 7 to 60 blocks.
pub fn blocks() -> Vec<u32> {
    (FIRST_BLOCKS..=LAST_BLOCKS).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bands_cover_7_to_60_without_gaps_or_overlaps() {
        for blocks in 1..=70 {
            let holding = TABLE_4.iter().filter(|band| band.contains(blocks)).count();
            let expected = usize::from((FIRST_BLOCKS..=LAST_BLOCKS).contains(&blocks));
            assert_eq!(holding, expected, "{blocks} blocks");
        }
        let band = |blocks: u32| TABLE_4.iter().position(|band| band.contains(blocks));
        assert_eq!(band(7), Some(0));
        assert_eq!(band(33), Some(2));
        assert_eq!(band(34), Some(3));
        assert_eq!(band(60), Some(5));
        assert_eq!(band(61), None);
        assert_eq!(band(6), None);
    }

    #[test]
    fn one_printed_speedup_disagrees_with_its_printed_times() {
        // Table 5's 25–33 row prints 1.7 for 0.8 / 0.46 = 1.74: within the paper's rounding.
        // Table 4's 34–42 row prints 1.84 for 102.72 / 50.77 = 2.02: noted in the report.
        let notes = inconsistencies();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("Table 4, 34–42") && notes[0].contains("2.02"), "{}", notes[0]);
    }

    #[test]
    fn both_tables_use_the_same_bands() {
        for (a, b) in TABLE_4.iter().zip(&TABLE_5) {
            assert_eq!((a.first, a.last), (b.first, b.last));
        }
        assert_eq!(TABLE_4[0].label(), "7–15");
    }
}
