//! The core count that every default thread count is taken from.
//!
//! `build`, `tally`, `split`, `explore GAMES`, `datagen`, `train`, `tune` and the engine's
//! `Threads` cap default to the machine's cores. The environment variable `POLYBOOK_CORES` (a
//! whole number from 1 to 4,096) stands in for what the system reports, so that the defaults a
//! 64- or 256-core machine would take can be run, and tested, on any machine.

/// The variable that overrides the core count the defaults see.
pub const CORES_VAR: &str = "POLYBOOK_CORES";

/// The most cores `POLYBOOK_CORES` may claim.
const MAX_CORES: usize = 4096;

/// The machine's cores as the defaults see them: `POLYBOOK_CORES` when it holds a whole number
/// from 1 to 4,096, otherwise what the system reports to this process (at least 1).
pub fn cores() -> usize {
    std::env::var(CORES_VAR)
        .ok()
        .and_then(|v| parse(&v))
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// A `POLYBOOK_CORES` value, when it is one.
fn parse(value: &str) -> Option<usize> {
    value
        .trim()
        .parse::<usize>()
        .ok()
        .filter(|n| (1..=MAX_CORES).contains(n))
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn only_a_whole_number_from_1_to_4096_is_a_core_count() {
        assert_eq!(parse("64"), Some(64));
        assert_eq!(parse(" 256\n"), Some(256));
        assert_eq!(parse("4096"), Some(4096));
        for bad in ["0", "-3", "4097", "", "eight", "2.5"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }
}
