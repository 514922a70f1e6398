//! The tally file's schema: its columns, its metadata, and how the key is stored.
//!
//! One row per (position, move), sorted by key, in these columns (all required):
//!
//! | column | Parquet type | what |
//! | --- | --- | --- |
//! | `key` | INT64 | the Polyglot key minus 2^63 (its top bit flipped), so signed order is key order |
//! | `move` | INT32 | the move in Polyglot's 16-bit encoding (castling as the king taking its rook) |
//! | `black` | BOOLEAN | the mover is Black |
//! | `games` | INT64 | games in which the move was played |
//! | `wins`, `draws`, `losses` | INT64 | their results for the mover |
//! | `first` | INT64 | when the move first appeared among its position's moves: 0, 1, 2… |
//!
//! With `tally --ratings`, four more columns (and `polybook.ratings` = `1` in the metadata):
//!
//! | column | Parquet type | what |
//! | --- | --- | --- |
//! | `rated_games` | INT64 | games in which both players had a rating (`WhiteElo`, `BlackElo` > 0) |
//! | `mover_rating_sum`, `opponent_rating_sum` | INT64 | over those games, the sums of the mover's and the other side's ratings |
//! | `last_date` | INT32 | the latest `Date` of the games as `yyyymmdd` (unknown month or day as 00; 0 if none had one) |
//!
//! SQL engines and Spark have no unsigned 64-bit integer: a key stored as it is would sort its
//! upper half before the lower. Stored minus 2^63, any engine groups, sorts and range-partitions
//! keys correctly as signed numbers. The file's key-value metadata says it is a tally
//! (`polybook.tally` = `1`), with which options it was made (`polybook.options`) and from how
//! many games (`polybook.games`).
//!
//! A reader finds the columns by their names ([`Layout::find`]), wherever a file has them: other
//! writers (DuckDB, Spark) may order them otherwise or add columns of their own.

use parquet::basic::Type as PhysicalType;
use parquet::file::metadata::FileMetaData;
use parquet::schema::types::SchemaDescriptor;

/// The columns of a tally, in the order polybook writes them.
pub const COLUMNS: [(&str, PhysicalType); 8] = [
    ("key", PhysicalType::INT64),
    ("move", PhysicalType::INT32),
    ("black", PhysicalType::BOOLEAN),
    ("games", PhysicalType::INT64),
    ("wins", PhysicalType::INT64),
    ("draws", PhysicalType::INT64),
    ("losses", PhysicalType::INT64),
    ("first", PhysicalType::INT64),
];

/// The columns `tally --ratings` adds, after [`COLUMNS`].
pub const RATING_COLUMNS: [(&str, PhysicalType); 4] = [
    ("rated_games", PhysicalType::INT64),
    ("mover_rating_sum", PhysicalType::INT64),
    ("opponent_rating_sum", PhysicalType::INT64),
    ("last_date", PhysicalType::INT32),
];

/// The schema polybook writes: the [`COLUMNS`], and the [`RATING_COLUMNS`] after them if
/// `rated`, all required.
pub(super) fn schema(rated: bool) -> String {
    let extra: &[_] = if rated { &RATING_COLUMNS } else { &[] };
    let mut text = String::from("message polybook_tally {\n");
    for (name, physical) in COLUMNS.iter().chain(extra) {
        text += &format!("    REQUIRED {physical:?} {name};\n");
    }
    text + "}"
}

/// The metadata key that marks a tally, and its format's version.
pub const MARK: (&str, &str) = ("polybook.tally", "1");
/// The metadata key of the options a tally was made with.
pub const OPTIONS: &str = "polybook.options";
/// The metadata key of the number of games counted.
pub const GAMES: &str = "polybook.games";
/// The metadata key that says the tally has the [`RATING_COLUMNS`] (`1`; absent otherwise).
pub const RATINGS: &str = "polybook.ratings";

/// The metadata key under which Spark stores a dataset's schema (with each column's metadata).
const SPARK_SCHEMA: &str = "org.apache.spark.sql.parquet.row.metadata";

/// The metadata of the `key` column in a schema Spark stored (JSON), where the Spark job puts
/// `polybook.tally`, `polybook.options` and `polybook.games`.
fn spark_key_metadata(schema: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let schema: serde_json::Value = serde_json::from_str(schema).ok()?;
    schema["fields"]
        .as_array()?
        .iter()
        .find(|f| f["name"] == "key")?["metadata"]
        .as_object()
        .cloned()
}

/// The key as stored: minus 2^63, so that signed order is the key's order.
pub fn stored_key(key: u64) -> i64 {
    (key ^ (1 << 63)) as i64
}

/// The key from its stored value.
pub fn key_of_stored(stored: i64) -> u64 {
    (stored as u64) ^ (1 << 63)
}

/// What a tally says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TallyMeta {
    /// The options that decide what was counted (`--max-ply 1024`, the filters), in one spelling.
    pub options: String,
    /// Games counted (used).
    pub games: u64,
    /// It has the [`RATING_COLUMNS`] (`tally --ratings`).
    pub ratings: bool,
}
/// Where each column of a tally is in one file, found by name when the file is opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Layout {
    pub key: usize,
    pub mv: usize,
    pub black: usize,
    pub games: usize,
    pub wins: usize,
    pub draws: usize,
    pub losses: usize,
    pub first: usize,
    /// The [`RATING_COLUMNS`], when the file's metadata says it has them.
    pub ratings: Option<RatingLayout>,
}

/// Where each of the [`RATING_COLUMNS`] is in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct RatingLayout {
    pub rated_games: usize,
    pub mover_sum: usize,
    pub opponent_sum: usize,
    pub last_date: usize,
}

impl Layout {
    /// Finds the columns of [`COLUMNS`] in `schema` by name (not yet the ratings'); the error
    /// says which column is missing or of another type.
    pub fn find(schema: &SchemaDescriptor) -> Result<Layout, String> {
        let find = |(name, ty)| column(schema, name, ty);
        let [key, mv, black, games, wins, draws, losses, first] = COLUMNS;
        Ok(Layout {
            key: find(key)?,
            mv: find(mv)?,
            black: find(black)?,
            games: find(games)?,
            wins: find(wins)?,
            draws: find(draws)?,
            losses: find(losses)?,
            first: find(first)?,
            ratings: None,
        })
    }
}

impl RatingLayout {
    /// Finds the columns of [`RATING_COLUMNS`] in `schema` by name.
    pub fn find(schema: &SchemaDescriptor) -> Result<RatingLayout, String> {
        let find = |(name, ty)| column(schema, name, ty);
        let [rated_games, mover_sum, opponent_sum, last_date] = RATING_COLUMNS;
        Ok(RatingLayout {
            rated_games: find(rated_games)?,
            mover_sum: find(mover_sum)?,
            opponent_sum: find(opponent_sum)?,
            last_date: find(last_date)?,
        })
    }
}

/// The index of the top-level column `name` in `schema`, checked to be of the type `ty`, one
/// value a row.
fn column(schema: &SchemaDescriptor, name: &str, ty: PhysicalType) -> Result<usize, String> {
    let found = (0..schema.num_columns()).find(|&i| schema.column(i).path().parts() == [name]);
    let Some(i) = found else {
        return Err(format!("it has no column {name:?}"));
    };
    let col = schema.column(i);
    if col.physical_type() != ty {
        return Err(format!(
            "column {name:?} is {}, not {ty}",
            col.physical_type()
        ));
    }
    if col.max_rep_level() != 0 {
        return Err(format!("column {name:?} is a list, not one {ty} a row"));
    }
    Ok(i)
}

/// What a file's key-value metadata says of it, checked to be a tally's (polybook's mark, of
/// this version).
pub(super) fn read_meta(metadata: &FileMetaData) -> Result<TallyMeta, String> {
    let file_kv = |key: &str| {
        metadata
            .key_value_metadata()
            .and_then(|kv| kv.iter().find(|e| e.key == key))
            .and_then(|e| e.value.clone())
    };
    // Spark cannot write a file's own metadata: its job puts polybook's on the `key` column
    // of the schema it stores in the file.
    let spark = file_kv(SPARK_SCHEMA).and_then(|schema| spark_key_metadata(&schema));
    let kv = |key: &str| match &spark {
        Some(fields) if file_kv(MARK.0).is_none() => {
            fields.get(key).and_then(|v| v.as_str().map(str::to_string))
        }
        _ => file_kv(key),
    };
    match kv(MARK.0) {
        Some(v) if v == MARK.1 => {}
        Some(v) => {
            return Err(format!(
                "its format is version {v}; this polybook reads version {}",
                MARK.1
            ));
        }
        None => return Err(format!("its metadata has no {:?} mark", MARK.0)),
    }
    Ok(TallyMeta {
        options: kv(OPTIONS).unwrap_or_default(),
        games: kv(GAMES).and_then(|g| g.parse().ok()).unwrap_or(0),
        ratings: kv(RATINGS).is_some_and(|v| v == "1"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_keys_sort_as_the_keys_do() {
        let keys = [0, 1, 0x7fff_ffff_ffff_ffff, 0x8000_0000_0000_0000, u64::MAX];
        for w in keys.windows(2) {
            assert!(stored_key(w[0]) < stored_key(w[1]), "{w:?}");
        }
        for k in keys {
            assert_eq!(key_of_stored(stored_key(k)), k);
            // Minus 2^63, as the README says.
            assert_eq!(i128::from(stored_key(k)), i128::from(k) - (1i128 << 63));
        }
    }
}
