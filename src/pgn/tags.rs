//! What polybook's readers read in a game's tags the same way: the variant rule (which `Variant`
//! tags name standard chess, which Chess960) and the `Date` tag.

/// What a `Variant` tag names, as far as the readers care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariantKind {
    /// Standard chess (`Standard`, `From Position`, no name, …).
    Standard,
    /// Chess960 (`Chess960`, `Fischerandom`, `FRC`, …).
    Chess960,
    /// Any other variant (atomic, crazyhouse, …).
    Other,
}

/// Whether a `Variant` tag names standard chess (`Standard`, `From Position`, …).
pub fn is_standard_variant(name: &[u8]) -> bool {
    matches!(classify_variant(name), VariantKind::Standard)
}

/// The kind of variant a `Variant` tag names (spaces around it and case aside).
pub fn classify_variant(name: &[u8]) -> VariantKind {
    let name = String::from_utf8_lossy(name).trim().to_ascii_lowercase();
    match name.as_str() {
        "" | "standard" | "chess" | "normal" | "from position" | "fromposition"
        | "from_position" => VariantKind::Standard,
        "chess960" | "chess 960" | "fischerandom" | "fischer random" | "fischerrandom" | "frc"
        | "960" => VariantKind::Chess960,
        _ => VariantKind::Other,
    }
}

/// A PGN date `YYYY.MM.DD` with `??` parts (unknown parts count as 0); `None` if the year is unknown.
pub fn parse_date(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().split(['.', '-', '/']);
    let year = parts.next()?.parse().ok()?;
    let month = parts.next().and_then(|m| m.parse().ok()).unwrap_or(0);
    let day = parts.next().and_then(|d| d.parse().ok()).unwrap_or(0);
    Some((year, month, day))
}
