//! The columns of one row group as read from a tally, and the checks of its rows: counts that
//! add up, moves of 15 bits, nothing negative.

use super::schema::key_of_stored;
use crate::builder::{PairCount, RatingSums};

/// The columns of one row group, as read.
#[derive(Default)]
pub(super) struct Columns {
    pub key: Vec<i64>,
    pub mv: Vec<i32>,
    pub black: Vec<bool>,
    pub games: Vec<i64>,
    pub wins: Vec<i64>,
    pub draws: Vec<i64>,
    pub losses: Vec<i64>,
    pub first: Vec<i64>,
    /// The [`RATING_COLUMNS`](super::RATING_COLUMNS) were read (else they are empty).
    pub rated: bool,
    pub rated_games: Vec<i64>,
    pub mover_sum: Vec<i64>,
    pub opponent_sum: Vec<i64>,
    pub last_date: Vec<i32>,
}

impl Columns {
    /// Row `i`, checked (`row` is its number in the file, from 1, for the error).
    #[inline]
    pub fn pair(&self, i: usize, row: u64) -> Result<PairCount, String> {
        let count = |v: i64| u64::try_from(v).ok();
        let mv = u16::try_from(self.mv[i]).ok().filter(|m| m & 0x8000 == 0);
        let (Some(mv), Some(games), Some(wins), Some(draws), Some(losses), Some(first)) = (
            mv,
            count(self.games[i]),
            count(self.wins[i]),
            count(self.draws[i]),
            count(self.losses[i]),
            count(self.first[i]),
        ) else {
            return Err(format!("row {row}: a move or count out of range"));
        };
        if games == 0 || wins.checked_add(draws).and_then(|s| s.checked_add(losses)) != Some(games)
        {
            return Err(format!(
                "row {row}: {games} games but {wins} wins, {draws} draws and {losses} losses"
            ));
        }
        let mut rating = RatingSums::default();
        if self.rated {
            let (Some(rated_games), Some(mover_sum), Some(opponent_sum), Ok(last_date)) = (
                count(self.rated_games[i]),
                count(self.mover_sum[i]),
                count(self.opponent_sum[i]),
                u32::try_from(self.last_date[i]),
            ) else {
                return Err(format!("row {row}: a rating sum or date out of range"));
            };
            if rated_games > games {
                return Err(format!(
                    "row {row}: {rated_games} rated games of {games} games"
                ));
            }
            rating = RatingSums {
                rated_games,
                mover_sum,
                opponent_sum,
                last_date,
            };
        }
        Ok(PairCount {
            key: key_of_stored(self.key[i]),
            mv,
            black: self.black[i],
            first,
            games,
            wins,
            draws,
            losses,
            rating,
        })
    }

    /// Row `i`, as [`Columns::check`] found it (always inline: a row copied out through memory
    /// costs more than all its uses, in `book`'s loop over single-move positions).
    #[inline(always)]
    pub fn row(&self, i: usize) -> PairCount {
        PairCount {
            key: key_of_stored(self.key[i]),
            mv: self.mv[i] as u16,
            black: self.black[i],
            first: self.first[i] as u64,
            games: self.games[i] as u64,
            wins: self.wins[i] as u64,
            draws: self.draws[i] as u64,
            losses: self.losses[i] as u64,
            rating: if self.rated {
                RatingSums {
                    rated_games: self.rated_games[i] as u64,
                    mover_sum: self.mover_sum[i] as u64,
                    opponent_sum: self.opponent_sum[i] as u64,
                    last_date: self.last_date[i] as u32,
                }
            } else {
                RatingSums::default()
            },
        }
    }

    /// Checks every row as [`Columns::pair`] does, column by column (`before`: the rows of the
    /// file before these).
    pub fn check(&self, before: u64) -> Result<(), String> {
        let n = self.key.len();
        // Counts are below 2^62 (a tally would need that many games), so their sum cannot wrap.
        const BIG: i64 = 1 << 62;
        let bad = (0..n).find(|&i| {
            let (g, w, d, l) = (self.games[i], self.wins[i], self.draws[i], self.losses[i]);
            !(0..0x8000).contains(&self.mv[i])
                | !(1..BIG).contains(&g)
                | !(0..BIG).contains(&w)
                | !(0..BIG).contains(&d)
                | !(0..BIG).contains(&l)
                | (self.first[i] < 0)
                | (w + d + l != g)
                | (self.rated
                    && ((self.rated_games[i] < 0)
                        | (self.rated_games[i] > g)
                        | (self.mover_sum[i] < 0)
                        | (self.opponent_sum[i] < 0)
                        | (self.last_date[i] < 0)))
        });
        match bad {
            Some(i) => match self.pair(i, before + i as u64 + 1) {
                Err(why) => Err(why),
                // Counts past 2^62 that add up: read row by row.
                Ok(_) => (i..n).try_for_each(|i| self.pair(i, before + i as u64 + 1).map(drop)),
            },
            None => Ok(()),
        }
    }

    pub fn clear(&mut self) {
        for v in [
            &mut self.key,
            &mut self.games,
            &mut self.wins,
            &mut self.draws,
            &mut self.losses,
            &mut self.first,
            &mut self.rated_games,
            &mut self.mover_sum,
            &mut self.opponent_sum,
        ] {
            v.clear();
        }
        self.mv.clear();
        self.black.clear();
        self.last_date.clear();
    }
}
