//! Book profiles (`BookProfile`, `play --book-profile`, `match --book-profile`): which books, and
//! which book settings, a game is played with, by its speed or time control, the engine's colour,
//! the opponent's kind and Chess960 — in the words bot authors already write.
//!
//! A profile is a YAML file in BotLi's grammar: a `books` table of names and paths, and an
//! `opening_books.books` table of *sections*, each keyed `BASE[_SUFFIX…]` and holding `names` (the
//! books, in priority order) and the settings. So a BotLi `config.yml` is a profile as it stands
//! (its other sections are ignored). lichess-bot's `engine.polyglot` section is read too (its
//! `book` lists per variant, `selection`, `min_weight`, `max_depth`, `normalization`).
//!
//! The section of a game is BotLi's: the bases `TIME_CONTROL` (`3+2`, `0.5+0`, in minutes and
//! seconds), then `SPEED` (`bullet`, …; lichess's classes, from the first `go` of the game), then
//! `standard`; for Chess960 `chess960`, then `standard`. For each base, the key with the most of
//! the game's suffixes (`white`/`black`, `human`/`bot` when `UCI_Opponent` says) comes first, in
//! any order, down to the bare base. A game with no section plays without a book.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml, YamlLoader};

use crate::book::Selection;
use crate::pgn::tags::Speed;
use crate::text::quote;

/// The suffixes a section key may carry (BotLi's); the last three cannot be known over UCI.
const SUFFIXES: [&str; 7] = [
    "white",
    "black",
    "human",
    "bot",
    "rated",
    "casual",
    "tournament",
];

/// The settings of one section: each `None` leaves the UCI option's (or the command's) value.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Section {
    /// The books, in priority order (paths, relative ones taken from the profile's folder).
    pub books: Vec<PathBuf>,
    pub selection: Option<Selection>,
    /// BotLi's `max_depth`: the book is asked while fewer plies than this have been played.
    pub max_depth_plies: Option<u32>,
    /// BotLi's `max_moves` (lichess-bot's `max_depth`): the engine's own book moves in a game.
    pub max_moves: Option<u32>,
    pub allow_repetitions: Option<bool>,
    pub min_weight: Option<u16>,
    /// In percent of the weight of the moves that count (lichess-bot's `min_weight` with
    /// `normalization: sum`).
    pub min_share: Option<u8>,
    /// In percent of the heaviest move's weight (lichess-bot's `min_weight` with
    /// `normalization: max`).
    pub min_percent_of_best: Option<u8>,
    pub width: Option<usize>,
    pub variety: Option<u8>,
    pub min_line_plies: Option<u32>,
}

impl Section {
    /// Sets in `choose` what the section sets (its books and rules are the caller's).
    pub fn apply(&self, choose: &mut crate::book::ChooseOptions) {
        choose.selection = self.selection.unwrap_or(choose.selection);
        choose.minimum_weight = self.min_weight.unwrap_or(choose.minimum_weight);
        choose.min_share = self.min_share.unwrap_or(choose.min_share);
        choose.min_percent_of_best = self
            .min_percent_of_best
            .unwrap_or(choose.min_percent_of_best);
        choose.width = self.width.unwrap_or(choose.width);
        choose.variety = self.variety.unwrap_or(choose.variety);
    }
}

/// What the engine knows of a game when it looks for its section.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GameFacts {
    /// The engine's colour (the side to move on `go`).
    pub white: bool,
    pub chess960: bool,
    /// The engine's clock and increment at the first `go` of the game, in milliseconds (`None`
    /// when that `go` had no clock, or the engine did not see it).
    pub clock: Option<(u64, u64)>,
    /// `Some(true)` against a person, `Some(false)` against a computer (from `UCI_Opponent`).
    pub human: Option<bool>,
}

impl GameFacts {
    /// The time control as BotLi writes it: the clock in minutes (whole or a fraction: `0.5`),
    /// `+`, the increment in whole seconds. The clock is rounded to 15 s (lichess's steps), so
    /// that a client's few milliseconds do not change the key.
    pub fn time_control(&self) -> Option<String> {
        let (seconds, increment) = self.rounded()?;
        let minutes = if seconds.is_multiple_of(60) {
            (seconds / 60).to_string()
        } else {
            (seconds as f64 / 60.0).to_string()
        };
        Some(format!("{minutes}+{increment}"))
    }

    /// lichess's class of the game (its estimate: clock + 40 × increment).
    pub fn speed(&self) -> Option<Speed> {
        let (seconds, increment) = self.rounded()?;
        let speed = Speed::of_time_control(&format!("{seconds}+{increment}"));
        (speed != Speed::Unknown).then_some(speed)
    }

    /// The clock in seconds, rounded to 15 s, and the increment in whole seconds.
    fn rounded(&self) -> Option<(u64, u64)> {
        let (clock, increment) = self.clock?;
        Some((clock.saturating_add(7_500) / 15_000 * 15, increment / 1000))
    }

    /// The suffixes this game has, most telling first.
    fn suffixes(&self) -> Vec<&'static str> {
        let mut s = vec![if self.white { "white" } else { "black" }];
        match self.human {
            Some(true) => s.push("human"),
            Some(false) => s.push("bot"),
            None => {}
        }
        s
    }

    /// The section keys to try, in BotLi's order.
    pub fn keys(&self) -> Vec<String> {
        let mut bases = Vec::new();
        if self.chess960 {
            bases.push("chess960".to_string());
        } else {
            bases.extend(self.time_control());
            bases.extend(self.speed().map(|s| match s {
                // lichess's API (and BotLi) write `ultraBullet`; keys are matched without case.
                Speed::UltraBullet => "ultrabullet".to_string(),
                s => s.name().to_string(),
            }));
        }
        bases.push("standard".to_string());
        let suffixes = self.suffixes();
        let mut keys = Vec::new();
        for base in &bases {
            for n in (0..=suffixes.len()).rev() {
                for chosen in permutations(&suffixes, n) {
                    let mut key = base.clone();
                    for s in chosen {
                        key.push('_');
                        key.push_str(s);
                    }
                    keys.push(key);
                }
            }
        }
        keys
    }
}

/// The orderings of `n` of `items` (all of them for `n` = 0: one, empty).
fn permutations<'a>(items: &[&'a str], n: usize) -> Vec<Vec<&'a str>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for (i, first) in items.iter().enumerate() {
        let rest: Vec<&str> = items
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, s)| *s)
            .collect();
        for mut tail in permutations(&rest, n - 1) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

/// A book profile read from its file.
#[derive(Clone, Debug, PartialEq)]
pub struct BookProfile {
    /// The sections by key (lower case), in the file's order.
    pub sections: Vec<(String, Section)>,
    /// What the file holds that can never be used (keys no game of polybook can have), each a
    /// sentence.
    pub notes: Vec<String>,
}

impl BookProfile {
    /// Reads the profile at `path`. An error is one sentence naming what is wrong and where.
    pub fn load(path: &Path) -> Result<BookProfile, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: {}", path.display(), crate::text::reason(&e)))?;
        let folder = path.parent().unwrap_or(Path::new(""));
        BookProfile::parse(&text, folder).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Reads a profile's text; relative book paths are taken from `folder`.
    pub fn parse(text: &str, folder: &Path) -> Result<BookProfile, String> {
        let docs = YamlLoader::load_from_str(text).map_err(|e| format!("not YAML ({e})"))?;
        let Some(doc) = docs.first() else {
            return Err("empty: no opening_books.books or engine.polyglot section".into());
        };
        if !matches!(doc, Yaml::Hash(_)) {
            return Err("not a YAML mapping of sections".into());
        }
        let mut profile = BookProfile {
            sections: Vec::new(),
            notes: Vec::new(),
        };
        let botli = &doc["opening_books"]["books"];
        let lichess_bot = &doc["engine"]["polyglot"];
        if !botli.is_badvalue() {
            profile.read_botli(doc, botli, folder)?;
        } else if !lichess_bot.is_badvalue() {
            profile.read_lichess_bot(lichess_bot, folder)?;
        } else {
            return Err(
                "no opening_books.books (BotLi's) or engine.polyglot (lichess-bot's) section"
                    .into(),
            );
        }
        if profile.sections.is_empty() {
            return Err("no section: opening_books.books is empty".into());
        }
        Ok(profile)
    }

    /// BotLi's `opening_books.books` sections, their `names` looked up in the top-level `books`
    /// (a name that is not there is taken as a path).
    fn read_botli(&mut self, doc: &Yaml, sections: &Yaml, folder: &Path) -> Result<(), String> {
        let mut named: HashMap<String, PathBuf> = HashMap::new();
        if let Yaml::Hash(books) = &doc["books"] {
            for (name, path) in books {
                let (Some(name), Some(path)) = (scalar(name), scalar(path)) else {
                    return Err("books: each entry is NAME: PATH".into());
                };
                named.insert(name, folder.join(path));
            }
        }
        let Yaml::Hash(sections) = sections else {
            return Err("opening_books.books is not a mapping of sections".into());
        };
        for (key, body) in sections {
            let key = scalar(key).unwrap_or_default().to_ascii_lowercase();
            let at = format!("opening_books.books.{key}");
            self.check_key(&key, &at)?;
            let Yaml::Hash(fields) = body else {
                return Err(format!("{at}: not a mapping of settings"));
            };
            let mut section = Section::default();
            for (field, value) in fields {
                let field = scalar(field).unwrap_or_default();
                let at = format!("{at}.{field}");
                match field.as_str() {
                    "names" => {
                        let Yaml::Array(names) = value else {
                            return Err(format!("{at}: a list of book names"));
                        };
                        for name in names {
                            let name = scalar(name).ok_or(format!("{at}: a list of book names"))?;
                            section.books.push(
                                named
                                    .get(&name)
                                    .cloned()
                                    .unwrap_or_else(|| folder.join(&name)),
                            );
                        }
                    }
                    _ => read_setting(&mut section, &field, value, &at)?,
                }
            }
            self.sections.push((key, section));
        }
        Ok(())
    }

    /// lichess-bot's `engine.polyglot`: `book` (lists of paths per variant; polybook plays
    /// `standard` and `chess960`), and `selection`, `min_weight` with `normalization`,
    /// `max_depth` (the engine's own book moves) for all of them.
    fn read_lichess_bot(&mut self, polyglot: &Yaml, folder: &Path) -> Result<(), String> {
        let mut common = Section::default();
        let normalization = scalar(&polyglot["normalization"]).unwrap_or("none".into());
        let Yaml::Hash(fields) = polyglot else {
            return Err("engine.polyglot is not a mapping".into());
        };
        for (field, value) in fields {
            let field = scalar(field).unwrap_or_default();
            let at = format!("engine.polyglot.{field}");
            match field.as_str() {
                "enabled" | "book" | "normalization" => {}
                "selection" => read_setting(&mut common, "selection", value, &at)?,
                "max_depth" => read_setting(&mut common, "max_moves", value, &at)?,
                "min_weight" => match normalization.as_str() {
                    "none" => read_setting(&mut common, "min_weight", value, &at)?,
                    "sum" => read_setting(&mut common, "min_share", value, &at)?,
                    "max" => read_setting(&mut common, "min_percent_of_best", value, &at)?,
                    other => {
                        return Err(format!(
                            "engine.polyglot.normalization {}: lichess-bot's are none, sum and max",
                            quote(other)
                        ));
                    }
                },
                _ => {
                    return Err(format!(
                        "{at}: not a setting of lichess-bot's polyglot section"
                    ));
                }
            }
        }
        let Yaml::Hash(variants) = &polyglot["book"] else {
            return Err(
                "engine.polyglot.book: a list of books per variant (standard: [a.bin])".into(),
            );
        };
        for (variant, paths) in variants {
            let variant = scalar(variant).unwrap_or_default().to_ascii_lowercase();
            let at = format!("engine.polyglot.book.{variant}");
            let paths = match paths {
                Yaml::Array(list) => list.iter().map(scalar).collect::<Option<Vec<String>>>(),
                one => scalar(one).map(|p| vec![p]),
            }
            .ok_or(format!("{at}: a path or a list of paths"))?;
            if !["standard", "chess960"].contains(&variant.as_str()) {
                self.notes.push(format!(
                    "{at}: polybook plays standard chess and Chess960, so these books are never used"
                ));
                continue;
            }
            let mut section = common.clone();
            section.books = paths.iter().map(|p| folder.join(p)).collect();
            self.sections.push((variant, section));
        }
        Ok(())
    }

    /// Refuses a key that is not `BASE[_SUFFIX…]`; notes one no game of polybook can have.
    fn check_key(&mut self, key: &str, at: &str) -> Result<(), String> {
        let mut parts = key.split('_');
        let base = parts.next().unwrap_or("");
        let suffixes: Vec<&str> = parts.collect();
        if let Some(bad) = suffixes.iter().find(|s| !SUFFIXES.contains(s)) {
            return Err(format!(
                "{at}: unknown suffix {}: the suffixes are white, black, human, bot, rated, casual and tournament",
                quote(bad)
            ));
        }
        let speeds = [
            "ultrabullet",
            "bullet",
            "blitz",
            "rapid",
            "classical",
            "correspondence",
        ];
        let variants = [
            "antichess",
            "atomic",
            "crazyhouse",
            "horde",
            "kingofthehill",
            "racingkings",
            "3check",
            "threecheck",
        ];
        let time_control = base.split_once('+').is_some_and(|(m, s)| {
            m.parse::<f64>().is_ok_and(|m| m >= 0.0) && s.parse::<u32>().is_ok()
        });
        if variants.contains(&base) {
            self.notes.push(format!(
                "{at}: polybook plays standard chess and Chess960, so this section is never used"
            ));
        } else if !(time_control
            || speeds.contains(&base)
            || base == "standard"
            || base == "chess960")
        {
            return Err(format!(
                "{at}: unknown key {}: a key is a time control (5+3), a speed (bullet, blitz, rapid, classical, ...), chess960 or standard, with suffixes such as _white",
                quote(key)
            ));
        }
        if let Some(s) = suffixes
            .iter()
            .find(|s| ["rated", "casual", "tournament"].contains(s))
        {
            self.notes.push(format!(
                "{at}: an engine cannot tell {s} games over UCI, so this section is never used"
            ));
        }
        Ok(())
    }

    /// The section of a game: its key and settings; `None` when the profile has none for it.
    pub fn section_for(&self, facts: &GameFacts) -> Option<(&str, &Section)> {
        facts.keys().iter().find_map(|key| {
            self.sections
                .iter()
                .find(|(k, _)| k == key)
                .map(|(k, s)| (k.as_str(), s))
        })
    }
}

/// A YAML scalar as text (strings, numbers, booleans).
fn scalar(y: &Yaml) -> Option<String> {
    match y {
        Yaml::String(s) | Yaml::Real(s) => Some(s.clone()),
        Yaml::Integer(i) => Some(i.to_string()),
        Yaml::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Reads one setting `field` of a section from `value`; `at` names it in errors.
fn read_setting(section: &mut Section, field: &str, value: &Yaml, at: &str) -> Result<(), String> {
    fn number<T: TryFrom<i64>>(value: &Yaml, at: &str, max: i64) -> Result<T, String> {
        value
            .as_i64()
            .filter(|&n| (0..=max).contains(&n))
            .and_then(|n| T::try_from(n).ok())
            .ok_or_else(|| format!("{at}: a whole number from 0 to {max}"))
    }
    match field {
        "selection" => {
            let text = scalar(value).unwrap_or_default();
            section.selection = Some(
                text.parse::<Selection>()
                    .map_err(|e| format!("{at}: {e}"))?,
            );
        }
        "max_depth" => section.max_depth_plies = Some(number(value, at, 2000)?),
        "max_moves" => section.max_moves = Some(number(value, at, 1000)?),
        "allow_repetitions" => {
            section.allow_repetitions = Some(value.as_bool().ok_or(format!("{at}: true or false"))?)
        }
        "min_weight" => section.min_weight = Some(number(value, at, 65535)?),
        "min_share" => section.min_share = Some(number(value, at, 100)?),
        "min_percent_of_best" => section.min_percent_of_best = Some(number(value, at, 100)?),
        "width" => section.width = Some(number(value, at, 256)?),
        "variety" => section.variety = Some(number(value, at, 100)?),
        "min_line_plies" => section.min_line_plies = Some(number(value, at, 100)?),
        _ => {
            return Err(format!(
                "{at}: unknown setting: a section has names, selection, max_depth, max_moves, allow_repetitions, min_weight, min_share, min_percent_of_best, width, variety and min_line_plies"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A BotLi configuration's book sections (the layout of BotLi's `config.yml.default`), with
    /// another section of the file around them.
    const BOTLI: &str = r#"
token: "xxxxxxxxxxxxxxxx"
engines:
  standard:
    dir: "./engines"
opening_books:
  enabled: false
  priority: 400
  books:
    bullet:
      selection: best_move
      names:
        - Fast
    standard_white:
      selection: uniform_random
      max_depth: 16
      names:
        - White
        - Main
    blitz_black_human:
      names: [Human]
      allow_repetitions: true
      max_moves: 4
    3+2:
      names: [Main]
      variety: 25
    chess960:
      names: [Nine]
    standard:
      selection: weighted_random
      names:
        - Main
books:
  Main: "books/main.bin"
  White: "/abs/white.bin"
  Fast: fast.bin
  Human: human.bin
  Nine: 960.bin
"#;

    fn facts(white: bool, clock: Option<(u64, u64)>, human: Option<bool>) -> GameFacts {
        GameFacts {
            white,
            chess960: false,
            clock,
            human,
        }
    }

    #[test]
    fn botli_sections_and_names() {
        let p = BookProfile::parse(BOTLI, Path::new("/cfg")).unwrap();
        let keys: Vec<&str> = p.sections.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            [
                "bullet",
                "standard_white",
                "blitz_black_human",
                "3+2",
                "chess960",
                "standard"
            ]
        );
        let white = &p.sections[1].1;
        assert_eq!(
            white.books,
            [
                PathBuf::from("/abs/white.bin"),
                PathBuf::from("/cfg/books/main.bin")
            ]
        );
        assert_eq!(white.selection, Some(Selection::Uniform));
        assert_eq!(white.max_depth_plies, Some(16));
        let human = &p.sections[2].1;
        assert_eq!(human.allow_repetitions, Some(true));
        assert_eq!(human.max_moves, Some(4));
        assert_eq!(p.sections[3].1.variety, Some(25));
        assert!(p.notes.is_empty());
    }

    /// BotLi's order (its `_get_book_key`): the time control, the speed, then `standard`; for
    /// each, the most suffixes first.
    #[test]
    fn the_most_specific_key_wins() {
        let p = BookProfile::parse(BOTLI, Path::new("/cfg")).unwrap();
        let key = |f: GameFacts| p.section_for(&f).map(|(k, _)| k.to_string());
        // 3+2: the time control's section, whatever the colour.
        assert_eq!(
            key(facts(true, Some((180_000, 2_000)), None)).as_deref(),
            Some("3+2")
        );
        // 1+0 is bullet.
        assert_eq!(
            key(facts(false, Some((60_000, 0)), None)).as_deref(),
            Some("bullet")
        );
        // 3+0 blitz as Black against a person; as Black against a computer: standard.
        assert_eq!(
            key(facts(false, Some((180_000, 0)), Some(true))).as_deref(),
            Some("blitz_black_human")
        );
        assert_eq!(
            key(facts(false, Some((180_000, 0)), Some(false))).as_deref(),
            Some("standard")
        );
        // 15+10 as White: standard_white before standard.
        assert_eq!(
            key(facts(true, Some((900_000, 10_000)), None)).as_deref(),
            Some("standard_white")
        );
        // No clock: standard only.
        assert_eq!(
            key(facts(true, None, None)).as_deref(),
            Some("standard_white")
        );
        let mut nine = facts(true, Some((60_000, 0)), None);
        nine.chess960 = true;
        assert_eq!(key(nine).as_deref(), Some("chess960"));
    }

    #[test]
    fn keys_in_botli_s_order() {
        let f = facts(true, Some((30_000, 0)), Some(false));
        let keys = f.keys();
        assert_eq!(
            &keys[..5],
            [
                "0.5+0_white_bot",
                "0.5+0_bot_white",
                "0.5+0_white",
                "0.5+0_bot",
                "0.5+0"
            ]
        );
        // lichess: under 30 s (estimated) is ultrabullet, so 0.5+0 is bullet.
        assert_eq!(keys[5], "bullet_white_bot");
        assert_eq!(keys.last().unwrap(), "standard");
        // lichess's bounds: 2:45 is bullet, 3:00 blitz (also 3:00 less a few milliseconds, as a
        // client may send it), 2+1 bullet (estimate 160 s), 2+2 blitz (200 s).
        for (clock, speed) in [
            ((165_000, 0), Speed::Bullet),
            ((180_000, 0), Speed::Blitz),
            ((179_990, 0), Speed::Blitz),
            ((120_000, 1_000), Speed::Bullet),
            ((120_000, 2_000), Speed::Blitz),
        ] {
            assert_eq!(
                facts(true, Some(clock), None).speed(),
                Some(speed),
                "{clock:?}"
            );
        }
        for (clock, control) in [((299_990, 3_000), "5+3"), ((15_000, 0), "0.25+0")] {
            let told = facts(true, Some(clock), None).time_control();
            assert_eq!(told.as_deref(), Some(control), "{clock:?}");
        }
    }

    #[test]
    fn lichess_bot_s_polyglot_section() {
        let text = r#"
engine:
  polyglot:
    enabled: false
    book:
      standard:
        - a.bin
        - b.bin
      atomic: c.bin
    min_weight: 10
    selection: "best_move"
    max_depth: 8
    normalization: "sum"
"#;
        let p = BookProfile::parse(text, Path::new("d")).unwrap();
        assert_eq!(p.sections.len(), 1);
        let (key, s) = &p.sections[0];
        assert_eq!(key, "standard");
        assert_eq!(
            s.books,
            [PathBuf::from("d/a.bin"), PathBuf::from("d/b.bin")]
        );
        assert_eq!(s.selection, Some(Selection::Best));
        assert_eq!(s.min_share, Some(10));
        assert_eq!(s.min_weight, None);
        assert_eq!(s.max_moves, Some(8));
        assert_eq!(p.notes.len(), 1, "{:?}", p.notes);
    }

    #[test]
    fn bad_profiles_are_one_sentence() {
        let bad = [
            ("a: [", "not YAML"),
            ("- 1", "not a YAML mapping"),
            ("token: x", "no opening_books.books"),
            (
                "opening_books:\n  books:\n    blitz_purple:\n      names: [a]",
                "unknown suffix 'purple'",
            ),
            (
                "opening_books:\n  books:\n    fast:\n      names: [a]",
                "unknown key 'fast'",
            ),
            (
                "opening_books:\n  books:\n    standard:\n      depth: 3",
                "unknown setting",
            ),
            (
                "opening_books:\n  books:\n    standard:\n      width: -1",
                "from 0 to 256",
            ),
            (
                "opening_books:\n  books:\n    standard:\n      selection: worst",
                "unknown book selection",
            ),
            (
                "opening_books:\n  books:\n    standard: 3",
                "not a mapping of settings",
            ),
            (
                "engine:\n  polyglot:\n    book: {standard: a.bin}\n    min_weight: 5\n    normalization: most",
                "lichess-bot's are none, sum and max",
            ),
        ];
        for (text, want) in bad {
            let e = BookProfile::parse(text, Path::new("")).unwrap_err();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let notes = BookProfile::parse(
            "opening_books:\n  books:\n    standard_rated:\n      names: [a]\n    atomic:\n      names: [b]",
            Path::new(""),
        )
        .unwrap()
        .notes;
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
