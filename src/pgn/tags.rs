//! What polybook's readers read in a game's tags the same way: the variant rule (which `Variant`
//! tags name standard chess, which Chess960), the `Date` tag, the `Result` tag, a game's start
//! ([`StartTags`]) and the speed of a `TimeControl`.

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

/// The players' names and where the game starts (the `White` and `Black` tags, trimmed, and
/// [`StartTags`]): what the readers that follow each game's players need (`check`,
/// `suite-stats`).
#[derive(Default)]
pub struct PlayerTags {
    pub white: String,
    pub black: String,
    pub start: StartTags,
}

impl PlayerTags {
    /// Takes in one tag (the others are ignored).
    pub fn read(&mut self, name: &[u8], value: pgn_reader::RawTag<'_>) {
        match name {
            b"White" => self.white = value.decode_utf8_lossy().trim().to_string(),
            b"Black" => self.black = value.decode_utf8_lossy().trim().to_string(),
            _ => self.start.read(name, value.as_bytes()),
        }
    }
}

/// The tags that say where a game starts and how it ended, read the same way by every reader of
/// positions (datagen, train, tune): the `Result`, the `FEN` set-up and the `Variant`.
#[derive(Default)]
pub struct StartTags {
    /// The `Result` tag.
    pub result: Outcome,
    /// The `FEN` tag's position: `None` without the tag, `Some(None)` when it does not read.
    pub fen: Option<Option<shakmaty::Chess>>,
    /// A `Variant` tag names another game than standard chess ([`is_standard_variant`]).
    pub other_variant: bool,
}

impl StartTags {
    /// Takes in one tag (the others are ignored).
    pub fn read(&mut self, name: &[u8], value: &[u8]) {
        match name {
            b"Result" => self.result = Outcome::of_tag(value),
            b"FEN" => {
                self.fen = Some(
                    shakmaty::fen::Fen::from_ascii(value)
                        .ok()
                        .and_then(|f| f.into_position(shakmaty::CastlingMode::Standard).ok()),
                )
            }
            b"Variant" => self.other_variant |= !is_standard_variant(value),
            _ => {}
        }
    }

    /// The game's start position: the usual one, or the `FEN` tag's where `set_ups` allows it;
    /// `None` for a game of another variant, a set-up not allowed, or a `FEN` that does not read.
    pub fn start(&self, set_ups: bool) -> Option<shakmaty::Chess> {
        if self.other_variant {
            return None;
        }
        match &self.fen {
            None => Some(shakmaty::Chess::default()),
            Some(fen) if set_ups => fen.clone(),
            Some(_) => None,
        }
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

/// A game's result as its `Result` tag says it: the one reading of the tag for every reader.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Outcome {
    /// `1-0`.
    WhiteWins,
    /// `1/2-1/2`.
    Draw,
    /// `0-1`.
    BlackWins,
    /// `*`, a missing tag or anything else.
    #[default]
    Unknown,
}

impl Outcome {
    /// The result a `Result` tag's value says (spaces around it aside): `1-0`, `1/2-1/2`, `0-1`;
    /// anything else is [`Outcome::Unknown`].
    pub fn of_tag(value: &[u8]) -> Outcome {
        match value.trim_ascii() {
            b"1-0" => Outcome::WhiteWins,
            b"1/2-1/2" => Outcome::Draw,
            b"0-1" => Outcome::BlackWins,
            _ => Outcome::Unknown,
        }
    }

    /// White's points: 2 for a win, 1 a draw, 0 a loss; `None` when unknown.
    pub fn white_points(self) -> Option<u8> {
        match self {
            Outcome::WhiteWins => Some(2),
            Outcome::Draw => Some(1),
            Outcome::BlackWins => Some(0),
            Outcome::Unknown => None,
        }
    }
}

/// How fast a game was, by lichess's rule: estimated seconds = initial + 40 × increment, under 30
/// ultrabullet, 180 bullet, 480 blitz, 1500 rapid, 21600 classical, else correspondence. One type
/// for `build --time-control` and the games explorer's `speed` filter; the number of each class is
/// what the explorer's index stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Speed {
    /// No `TimeControl` tag, or one that does not read (`?`): no class a filter can choose.
    #[value(skip)]
    Unknown = 0,
    #[value(name = "ultrabullet")]
    UltraBullet = 1,
    Bullet = 2,
    Blitz = 3,
    Rapid = 4,
    Classical = 5,
    Correspondence = 6,
}

impl Speed {
    /// Every class, [`Speed::Unknown`] last.
    pub const ALL: [Speed; 7] = [
        Speed::UltraBullet,
        Speed::Bullet,
        Speed::Blitz,
        Speed::Rapid,
        Speed::Classical,
        Speed::Correspondence,
        Speed::Unknown,
    ];

    /// The class's name, as the options and the explorer's API write it.
    pub fn name(self) -> &'static str {
        match self {
            Speed::Unknown => "unknown",
            Speed::UltraBullet => "ultrabullet",
            Speed::Bullet => "bullet",
            Speed::Blitz => "blitz",
            Speed::Rapid => "rapid",
            Speed::Classical => "classical",
            Speed::Correspondence => "correspondence",
        }
    }

    /// The class numbered `bits` (see the type), [`Speed::Unknown`] for any other number.
    pub fn from_bits(bits: u64) -> Speed {
        Speed::ALL
            .into_iter()
            .find(|s| *s as u64 == bits)
            .unwrap_or(Speed::Unknown)
    }

    /// The class of a `TimeControl` tag: `60+0`, `180+2`, `600` (no increment), `40/7200:3600`
    /// (the first stage's seconds), `1/259200` (chess.com's daily: a move in 3 days), `-`
    /// (correspondence); [`Speed::Unknown`] when it does not read (`?`, empty).
    pub fn of_time_control(tc: &str) -> Speed {
        let tc = tc.trim();
        if tc == "-" {
            return Speed::Correspondence;
        }
        let seconds = || -> Option<u64> {
            let first = tc.split(':').next()?.trim();
            // `moves/seconds` stages are classical-style controls: estimate from the seconds.
            let first = first.rsplit('/').next()?;
            let (base, inc) = match first.split_once('+') {
                Some((b, i)) => (b.trim().parse::<u64>().ok()?, i.trim().parse::<u64>().ok()?),
                None => (first.parse::<u64>().ok()?, 0),
            };
            base.checked_add(inc.checked_mul(40)?)
        };
        match seconds() {
            None => Speed::Unknown,
            Some(s) if s < 30 => Speed::UltraBullet,
            Some(s) if s < 180 => Speed::Bullet,
            Some(s) if s < 480 => Speed::Blitz,
            Some(s) if s < 1500 => Speed::Rapid,
            Some(s) if s < 21600 => Speed::Classical,
            Some(_) => Speed::Correspondence,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The four results, spaces around them aside; anything else is unknown.
    #[test]
    fn result_tags() {
        for (tag, outcome, points) in [
            ("1-0", Outcome::WhiteWins, Some(2)),
            (" 1/2-1/2 ", Outcome::Draw, Some(1)),
            ("0-1", Outcome::BlackWins, Some(0)),
            ("*", Outcome::Unknown, None),
            ("½-½", Outcome::Unknown, None),
            ("1-0 ", Outcome::WhiteWins, Some(2)),
            ("", Outcome::Unknown, None),
        ] {
            assert_eq!(Outcome::of_tag(tag.as_bytes()), outcome, "{tag}");
            assert_eq!(outcome.white_points(), points, "{tag}");
        }
    }

    /// lichess's bounds, on both sides of each: the estimate is base + 40 × increment.
    #[test]
    fn speeds_by_lichess_bounds() {
        for (tc, speed) in [
            ("29+0", Speed::UltraBullet),
            ("29", Speed::UltraBullet),
            ("30+0", Speed::Bullet),
            ("179+0", Speed::Bullet),
            ("180+0", Speed::Blitz),
            ("139+1", Speed::Bullet),
            ("140+1", Speed::Blitz),
            ("479+0", Speed::Blitz),
            ("480+0", Speed::Rapid),
            ("1499", Speed::Rapid),
            ("1500", Speed::Classical),
            ("21599+0", Speed::Classical),
            ("21600+0", Speed::Correspondence),
            ("1/259200", Speed::Correspondence),
            ("-", Speed::Correspondence),
            ("40/7200:3600", Speed::Classical),
            ("86400", Speed::Correspondence),
            ("?", Speed::Unknown),
            ("", Speed::Unknown),
            ("abc+1", Speed::Unknown),
        ] {
            assert_eq!(Speed::of_time_control(tc), speed, "{tc}");
        }
    }
}
