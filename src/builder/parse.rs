//! Reading PGN text into plies: every game of a chunk through the build's [`GameVisitor`], by
//! the shared reader of [`crate::pgn::read`].

use super::filter::GameFilter;
use super::game::{ChunkOutput, GameVisitor};
use crate::pgn::read::{ChunkVisitor, read_games};

impl ChunkVisitor for GameVisitor<'_> {
    type Mark = super::game::Mark;
    fn mark(&mut self) -> Self::Mark {
        GameVisitor::mark(self)
    }
    fn rewind(&mut self, mark: Self::Mark) {
        GameVisitor::rewind(self, mark)
    }
    fn broken(&mut self, why: &str) -> bool {
        GameVisitor::broken(self, why)
    }
    fn finish(&mut self) {
        GameVisitor::finish(self)
    }
}

/// Reads a chunk of whole games: its plies, game counts and incidents.
pub fn parse_chunk(data: &[u8], filter: &GameFilter) -> ChunkOutput {
    let mut visitor = GameVisitor::new(filter);
    visitor.out.plies.reserve(data.len() / 6);
    read_games(data, &mut visitor);
    visitor.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::Reason;
    use crate::builder::game::{Incident, Ply};
    use crate::pgn::input;
    use crate::pgn::read::read_one_by_one;

    /// What reading a text chunk by chunk gave: the chunks' outputs put together, with game
    /// numbers counted from the start of the text.
    #[derive(Debug, PartialEq, Eq)]
    struct Reading {
        games: u64,
        used: u64,
        plies: Vec<Ply>,
        incidents: Vec<(u64, Reason, String)>,
    }

    fn read_in_chunks<'a>(chunks: impl IntoIterator<Item = &'a [u8]>) -> Reading {
        let filter = GameFilter::default();
        let mut r = Reading {
            games: 0,
            used: 0,
            plies: Vec::new(),
            incidents: Vec::new(),
        };
        for chunk in chunks {
            let out = parse_chunk(chunk, &filter);
            r.incidents.extend(out.incidents.into_iter().map(
                |Incident {
                     game,
                     reason,
                     detail,
                 }| (r.games + game, reason, detail),
            ));
            r.games += out.games;
            r.used += out.used;
            r.plies.extend(out.plies);
        }
        r
    }

    fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }

    fn rfind(hay: &[u8], byte: u8) -> Option<usize> {
        hay.iter().rposition(|&b| b == byte)
    }

    /// Where a game's movetext begins: after the blank line that ends its tags.
    fn movetext(game: &[u8]) -> usize {
        let lf = find(game, b"\n\n").map(|i| i + 2);
        let crlf = find(game, b"\n\r\n").map(|i| i + 3);
        lf.into_iter().chain(crlf).min().unwrap()
    }

    fn lf_only(text: &[u8]) -> Vec<u8> {
        text.iter().copied().filter(|&b| b != b'\r').collect()
    }

    /// The games of a real file (historical matches, CRLF: multi-line comments, variations,
    /// [FEN] games) and of a lichess export (LF, one-line movetext, a comment on every move),
    /// damaged the ways real files are: comments and variations never closed, stray `[` lines,
    /// NUL bytes, CRLF and LF mixed, a 20 KB tag, and a text that ends inside a comment.
    fn damaged_real_games() -> Vec<Vec<u8>> {
        let root = env!("CARGO_MANIFEST_DIR");
        let matches = std::fs::read(format!("{root}/pgn/world_matches.pgn")).unwrap();
        let mut lichess = Vec::new();
        let xz = std::fs::File::open(format!(
            "{root}/tests/data/pgn/lichess_magnus_2018-2022.pgn.xz"
        ))
        .unwrap();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(xz2::read::XzDecoder::new(xz), 40_000),
            &mut lichess,
        )
        .unwrap();
        let mut games = Vec::new();
        for text in [&matches[..], &lichess[..]] {
            let mut start = 0;
            let mut n = 0;
            while let Some(next) = input::next_game_start(text, start) {
                if n == 24 {
                    break;
                }
                games.push(text[start..next].to_vec());
                start = next;
                n += 1;
            }
        }
        // A comment never closed (a multi-line one).
        let g = &mut games[2];
        let close = rfind(g, b'}').unwrap();
        g.remove(close);
        // A variation never closed.
        let g = games[4..24].iter_mut().find(|g| g.contains(&b'(')).unwrap();
        let close = rfind(g, b')').unwrap();
        g.remove(close);
        // Stray `[` lines and NUL bytes in the movetext.
        let g = &mut games[6];
        let moves = movetext(g);
        let line = moves + find(&g[moves..], b"\n").unwrap() + 1;
        g.splice(
            line..line,
            b"[\n[Event\n[%eval 0.3]\n\0\0[\n".iter().copied(),
        );
        // LF throughout one game, in half of another (the file is CRLF).
        games[8] = lf_only(&games[8]);
        let half = games[9].len() / 2;
        let lf = lf_only(&games[9][..half]);
        games[9].splice(..half, lf);
        // A 20 KB tag before the others (before a [FEN] in a game that has one).
        let g = games
            .iter()
            .position(|g| find(g, b"[FEN ").is_some())
            .unwrap();
        let long = format!("[Annotator \"{}\"]\n", "x".repeat(20_000));
        games[g].splice(0..0, long.bytes());
        // NUL bytes in a tag value and in the movetext.
        let g = &mut games[12];
        let quote = find(g, b"\"").unwrap() + 1;
        g.splice(quote..quote, [0, 0, 0]);
        let mid = g.len() / 2;
        g.splice(mid..mid, [0, b' ', 0]);
        // A comment opened after a game's last one, never closed.
        let g = &mut games[14];
        let after = rfind(g, b'}').unwrap() + 1;
        g.splice(after..after, b"{ never closed\n\n".iter().copied());
        // A lichess game's last comment never closed.
        let g = &mut games[30];
        let close = rfind(g, b'}').unwrap();
        g.remove(close);
        // A blank line inside a tag section: by the rule the tags after it start a game, while
        // pgn-reader, reading on, would take them for the same game's.
        let g = &mut games[16];
        let second_tag = find(g, b"\n[").unwrap() + 1;
        g.splice(second_tag..second_tag, b"\r\n".iter().copied());
        // A tag value across lines, and a tag line left open.
        let g = &mut games[18];
        let quote = find(g, b"\"").unwrap() + 1;
        g.splice(quote..quote, b"two\r\nlines ".iter().copied());
        let g = &mut games[20];
        let end = find(g, b"]").unwrap();
        g.remove(end);
        // The text ends inside a comment.
        let last = games.last_mut().unwrap();
        let open = last.len() / 2 + find(&last[last.len() / 2..], b"{").unwrap() + 1;
        last.truncate(open);
        games
    }

    /// However a text is cut into chunks at game starts, it reads the same: the rule of where a
    /// game starts is the splitter's and the reader's alike.
    #[test]
    fn a_cut_at_any_game_start_reads_the_same() {
        let games = damaged_real_games();
        let text = games.concat();
        let whole = read_in_chunks([&text[..]]);
        // The damage is seen as such, and nothing else is lost.
        let reasons: Vec<Reason> = whole.incidents.iter().map(|i| i.1).collect();
        assert!(
            reasons.iter().filter(|&&r| r == Reason::Unfinished).count() >= 3,
            "{:?}",
            whole.incidents
        );
        assert!(!reasons.contains(&Reason::BadTags), "{:?}", whole.incidents);
        assert!(whole.games >= games.len() as u64);
        let mut start = 0;
        for g in &games[..games.len() - 1] {
            start += g.len();
            let cut = read_in_chunks([&text[..start], &text[start..]]);
            assert_eq!(cut, whole, "cut at byte {start}");
        }
    }

    /// Reading games in runs (one reader across game starts where no comment is open) is reading
    /// each game alone.
    #[test]
    fn runs_read_as_games_alone() {
        let games = damaged_real_games();
        let text = games.concat();
        let filter = GameFilter::default();
        let mut alone = GameVisitor::new(&filter);
        read_one_by_one(&text, 0, &mut alone);
        alone.finish();
        let mut runs = GameVisitor::new(&filter);
        read_games(&text, &mut runs);
        assert_eq!(runs.out.games, alone.out.games);
        assert_eq!(runs.out.used, alone.out.used);
        assert_eq!(runs.out.plies, alone.out.plies);
        let incidents = |v: &GameVisitor| -> Vec<(u64, Reason, String)> {
            v.out
                .incidents
                .iter()
                .map(|i| (i.game, i.reason, i.detail.clone()))
                .collect()
        };
        assert_eq!(incidents(&runs), incidents(&alone));
        // Most games are read in runs of several.
        let starts = std::iter::successors(Some(0), |&s| input::next_game_start(&text, s)).count();
        let runs = std::iter::successors(Some(0), |&s| {
            Some(input::run_end(&text, s)).filter(|&e| e < text.len())
        })
        .count();
        assert!(runs * 4 < starts, "{runs} runs for {starts} games");
    }

    /// The chunker, with every chunk size, cuts only at game starts: the reading is the same.
    #[test]
    fn chunks_of_every_size_read_the_same() {
        let games = damaged_real_games();
        let text = games[..16].concat();
        let whole = read_in_chunks([&text[..]]);
        let sizes = (1..600).chain((600..text.len() + 1).step_by(97));
        for target in sizes {
            let mut chunker = input::Chunker::new(&text[..], target);
            let mut chunks = Vec::new();
            while let Some(chunk) = chunker.next_chunk().unwrap() {
                chunks.push(chunk);
            }
            assert_eq!(chunks.concat(), text);
            let got = read_in_chunks(chunks.iter().map(|c| &c[..]));
            assert_eq!(got, whole, "chunks of {target} bytes");
        }
    }

    /// A tag longer than pgn-reader's buffer is read whole: the game with it reads as without it.
    #[test]
    fn a_long_tag_is_read_whole() {
        let root = env!("CARGO_MANIFEST_DIR");
        let matches = std::fs::read(format!("{root}/pgn/world_matches.pgn")).unwrap();
        // The second game has a [FEN] (a position from move 17).
        let start = input::next_game_start(&matches, 0).unwrap();
        let end = input::next_game_start(&matches, start).unwrap();
        let game = &matches[start..end];
        assert!(find(game, b"[FEN ").is_some());
        let plain = read_in_chunks([game]);
        assert!(plain.plies.len() > 10 && plain.incidents.is_empty());
        for len in [300, 20_000, 1 << 20] {
            let long = format!("[Annotator \"{}\"]\n", "y".repeat(len));
            let with_long: Vec<u8> = long.bytes().chain(game.iter().copied()).collect();
            assert_eq!(
                read_in_chunks([&with_long[..]]),
                plain,
                "a tag of {len} bytes"
            );
        }
    }
}
