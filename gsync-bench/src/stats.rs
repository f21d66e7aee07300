//! Summaries of repeated measurements: median and spread (min–max, quartiles).

/// The distribution of a set of repeated measurements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Summary {
    /// How many measurements.
    pub n: usize,
    /// The median.
    pub median: f64,
    /// The smallest measurement.
    pub min: f64,
    /// The largest measurement.
    pub max: f64,
    /// The first quartile (linear interpolation between order statistics).
    pub q1: f64,
    /// The third quartile.
    pub q3: f64,
}

impl Summary {
    /// Summarizes `samples`; `None` when there is no finite sample. Non-finite values are ignored.
    pub fn of(samples: &[f64]) -> Option<Summary> {
        let mut sorted: Vec<f64> = samples.iter().copied().filter(|x| x.is_finite()).collect();
        if sorted.is_empty() {
            return None;
        }
        sorted.sort_by(f64::total_cmp);
        Some(Summary {
            n: sorted.len(),
            median: quantile(&sorted, 0.5),
            min: sorted[0],
            max: sorted[sorted.len() - 1],
            q1: quantile(&sorted, 0.25),
            q3: quantile(&sorted, 0.75),
        })
    }

    /// The interquartile range.
    pub fn iqr(&self) -> f64 {
        self.q3 - self.q1
    }

    /// The interquartile range relative to the median (0 for a zero median).
    pub fn relative_iqr(&self) -> f64 {
        if self.median == 0.0 {
            0.0
        } else {
            self.iqr() / self.median.abs()
        }
    }

    /// Whether every measurement here lies below every measurement of `other`:
    /// the two ranges do not overlap.
    pub fn entirely_below(&self, other: &Summary) -> bool {
        self.max < other.min
    }
}

/// The `q`-quantile (0 ≤ q ≤ 1) of sorted, non-empty data, interpolating
/// linearly between neighbouring order statistics (R's type 7).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    debug_assert!(!sorted.is_empty());
    let position = q.clamp(0.0, 1.0) * (sorted.len() - 1) as f64;
    let below = position.floor() as usize;
    let above = position.ceil() as usize;
    let fraction = position - below as f64;
    sorted[below] + (sorted[above] - sorted[below]) * fraction
}

/// The arithmetic mean; `None` for no values.
pub fn mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        None
    } else {
        Some(values.iter().sum::<f64>() / values.len() as f64)
    }
}

/// `a / b − 1`: how much larger `a` is than `b`, as a fraction.
pub fn relative_change(a: f64, b: f64) -> f64 {
    a / b - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_odd_count_is_the_middle_value() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 9.0, 7.0]).expect("values");
        assert_eq!((s.n, s.median, s.min, s.max), (5, 5.0, 1.0, 9.0));
        assert_eq!((s.q1, s.q3), (3.0, 7.0));
        assert_eq!(s.iqr(), 4.0);
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        let s = Summary::of(&[4.0, 1.0, 2.0, 10.0]).expect("values");
        assert_eq!(s.median, 3.0);
        // Type 7 quartiles: positions 0.75 and 2.25 of [1, 2, 4, 10].
        assert!((s.q1 - 1.75).abs() < 1e-12, "{}", s.q1);
        assert!((s.q3 - 5.5).abs() < 1e-12, "{}", s.q3);
    }

    #[test]
    fn one_sample_is_its_own_summary_and_none_is_no_summary() {
        let s = Summary::of(&[2.5]).expect("one value");
        assert_eq!((s.median, s.min, s.max, s.q1, s.q3), (2.5, 2.5, 2.5, 2.5, 2.5));
        assert_eq!(Summary::of(&[]), None);
        assert_eq!(Summary::of(&[f64::NAN, f64::INFINITY]), None);
        assert_eq!(Summary::of(&[f64::NAN, 1.0]).map(|s| s.n), Some(1));
    }

    #[test]
    fn disjoint_ranges_are_told_apart_from_overlapping_ones() {
        let low = Summary::of(&[1.0, 2.0, 3.0]).expect("values");
        let high = Summary::of(&[3.5, 4.0]).expect("values");
        let touching = Summary::of(&[3.0, 4.0]).expect("values");
        assert!(low.entirely_below(&high));
        assert!(!high.entirely_below(&low));
        assert!(!low.entirely_below(&touching), "a shared value is an overlap");
    }

    #[test]
    fn relative_measures() {
        assert_eq!(mean(&[1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(mean(&[]), None);
        assert!((relative_change(1.468, 1.0) - 0.468).abs() < 1e-12);
        let s = Summary::of(&[9.0, 10.0, 11.0]).expect("values");
        assert!((s.relative_iqr() - 0.1).abs() < 1e-12);
    }
}
