//! Barrier names, for messages and command lines: `Display` and `FromStr` round-trip.

use std::fmt;
use std::str::FromStr;

use super::Barrier;

/// The names [`Barrier::from_str`] accepts, as listed in its errors.
const VALID_NAMES: &str = "auto, cooperative, lbs, lfs, ilbs, ilbs:<groups>, ulfs, relay, multi-launch";

impl fmt::Display for Barrier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Barrier::Ilbs { groups: Some(groups) } => write!(f, "{}:{groups}", self.name()),
            _ => f.write_str(self.name()),
        }
    }
}

/// Parses the names `Display` writes, ignoring ASCII case:
///
/// ```
/// use gsync_runtime::Barrier;
/// assert_eq!("ilbs:6".parse::<Barrier>(), Ok(Barrier::Ilbs { groups: Some(6) }));
/// assert_eq!("ulfs".parse::<Barrier>().map(|barrier| barrier.to_string()).as_deref(), Ok("ulfs"));
/// assert!("xyz".parse::<Barrier>().is_err());
/// ```
impl FromStr for Barrier {
    type Err = ParseBarrierError;

    fn from_str(input: &str) -> Result<Self, Self::Err> {
        let lower = input.trim().to_ascii_lowercase();
        if let Some(groups) = lower.strip_prefix("ilbs:") {
            return match groups.parse::<u32>() {
                Ok(groups) if groups > 0 => Ok(Barrier::Ilbs { groups: Some(groups) }),
                _ => Err(ParseBarrierError::new(input, "the ILBS group count must be a whole number of at least 1")),
            };
        }
        Barrier::ALL
            .iter()
            .copied()
            .find(|barrier| barrier.name() == lower)
            .ok_or_else(|| ParseBarrierError::new(input, "unknown barrier"))
    }
}

/// A string that names no barrier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseBarrierError {
    input: String,
    problem: &'static str,
}

impl ParseBarrierError {
    fn new(input: &str, problem: &'static str) -> Self {
        ParseBarrierError { input: input.to_owned(), problem }
    }
}

impl fmt::Display for ParseBarrierError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}; valid barriers are {VALID_NAMES}", self.input, self.problem)
    }
}

impl std::error::Error for ParseBarrierError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_barrier_round_trips_through_its_name() {
        let explicit = [Barrier::Ilbs { groups: Some(6) }, Barrier::Ilbs { groups: Some(1) }];
        for &barrier in Barrier::ALL.iter().chain(&explicit) {
            let name = barrier.to_string();
            assert_eq!(name.parse::<Barrier>(), Ok(barrier), "{name}");
        }
    }

    #[test]
    fn names_are_the_documented_ones() {
        let names: Vec<String> = Barrier::ALL.iter().map(Barrier::to_string).collect();
        assert_eq!(names, ["auto", "cooperative", "lbs", "lfs", "ilbs", "ulfs", "relay", "multi-launch"]);
        assert_eq!(Barrier::Ilbs { groups: Some(6) }.to_string(), "ilbs:6");
        assert_eq!(Barrier::Ilbs { groups: Some(6) }.name(), "ilbs");
    }

    #[test]
    fn parsing_ignores_case_and_surrounding_space() {
        assert_eq!(" LBS ".parse::<Barrier>(), Ok(Barrier::Lbs));
        assert_eq!("Multi-Launch".parse::<Barrier>(), Ok(Barrier::MultiLaunch));
        assert_eq!("ILBS:12".parse::<Barrier>(), Ok(Barrier::Ilbs { groups: Some(12) }));
    }

    #[test]
    fn a_bad_name_lists_the_valid_ones() {
        let error = "grid".parse::<Barrier>().expect_err("not a barrier");
        let message = error.to_string();
        assert!(message.starts_with("`grid`: unknown barrier"), "{message}");
        assert!(
            message.contains("auto, cooperative, lbs, lfs, ilbs, ilbs:<groups>, ulfs, relay, multi-launch"),
            "{message}"
        );
    }

    #[test]
    fn a_bad_group_count_is_refused_with_the_reason() {
        for input in ["ilbs:0", "ilbs:", "ilbs:-3", "ilbs:x"] {
            let message = input.parse::<Barrier>().expect_err(input).to_string();
            assert!(message.contains("group count must be a whole number of at least 1"), "{message}");
        }
    }
}
