//! `polybook export`: a book's tree from the start position as one PGN game, or the positions at
//! one ply as an opening suite (EPD or PGN) for match runners.

use std::io::Write;
use std::path::{Path, PathBuf};

use flate2::Compression;
use flate2::write::{DeflateEncoder, GzEncoder};
use polybook::book::{Book, Key, LearnLayout};
use polybook::inspect::wdl::WdlModel;
use polybook::inspect::{
    ExportOptions, Material, SuiteOpening, SuiteOptions, export_pgn, opening_suite,
    opening_suite_with, write_movetext,
};
use polybook::openings::LineName;
use polybook::tally::TallyLookup;
use rand::SeedableRng;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use shakmaty::Position;

use super::filter::percent;
use super::output::{Output, write_error};
use super::{CliError, CliResult, open_book};

/// Write BOOK's tree from the start position as one PGN game: the heaviest move of each position
/// as the main line, the other book moves as variations, each move with its weight and share as a
/// comment (`{w 120, 35.2%}`). A move back to a position earlier on its line is marked `cycle`
/// and not followed.
///
/// With --ply N, write an opening suite instead: each position that book lines reach in exactly N
/// plies, once, in a stable order (depth first, heaviest move first), as EPD lines (--epd) or as
/// one PGN game per opening (--pgn), for `fastchess`/`cutechess-cli -openings file=…`. On a book
/// with scores (`polybook analyse`), --min-eval/--max-eval keep the positions whose score, in
/// centipawns from White's view, lies in the window.
///
/// --plies A-B lists the positions at every ply from A to B, each position once whatever the
/// move order (the first line that reaches it is kept); --min-games (with --tally), --material
/// and --draw-rate filter them; --shuffle --seed S shuffles them; --opcodes adds EPD's `c0` (the
/// line and its statistics) and `id`; an output ending in .gz or .zip is compressed.
#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("format").required(true).args(["pgn", "epd"])))]
#[command(group(clap::ArgGroup::new("suite").args(["ply", "plies"])))]
pub struct Args {
    /// The book to export.
    book: PathBuf,
    /// Write PGN: the tree as one game, or with --ply one game per opening.
    #[arg(long)]
    pgn: bool,
    /// Write EPD, one position per line (needs --ply or --plies).
    #[arg(long, requires = "suite")]
    epd: bool,
    /// The file to write (atomically); default: standard output. A name ending in .gz is
    /// written gzipped, one ending in .zip as a zip archive of one file (the name without .zip).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// An opening suite: the positions book lines reach in exactly N plies.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    ply: Option<u32>,
    /// An opening suite: the positions book lines reach at every ply from A to B (A-B, or N).
    #[arg(long, value_name = "A-B", value_parser = plies, conflicts_with = "ply")]
    plies: Option<(u32, u32)>,
    #[command(flatten)]
    eval: EvalWindow,
    #[command(flatten)]
    filters: SuiteFilters,
    /// Read the learn fields as prodeo (scores) or polyglot; default: prodeo for a book that
    /// `analyse` wrote (it carries a mark), polyglot otherwise.
    #[arg(long, value_name = "LAYOUT")]
    learn: Option<LearnLayout>,
    /// The longest line of the tree, in plies.
    #[arg(long, value_name = "N", default_value_t = 20, conflicts_with = "suite")]
    max_ply: u32,
    /// Leave out moves whose share of their position is below PCT percent.
    #[arg(long, value_name = "PCT", default_value_t = 0.0, value_parser = percent)]
    min_share: f64,
    /// Write at most this many moves of the tree in all (transpositions make trees grow fast).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 5000,
        conflicts_with = "suite"
    )]
    max_moves: u64,
    /// Print what was written as one JSON object (on stderr when the PGN goes to stdout).
    #[arg(long)]
    json: bool,
}

/// `--min-eval`/`--max-eval`: both need --ply.
#[derive(clap::Args)]
#[group(requires = "suite", multiple = true)]
struct EvalWindow {
    /// With --ply: keep the positions scored at least CP centipawns for White.
    #[arg(long, value_name = "CP", allow_negative_numbers = true)]
    min_eval: Option<i32>,
    /// With --ply: keep the positions scored at most CP centipawns for White.
    #[arg(long, value_name = "CP", allow_negative_numbers = true)]
    max_eval: Option<i32>,
}

/// The suite's other filters, its order and its EPD opcodes: all need --ply or --plies.
#[derive(clap::Args)]
#[group(requires = "suite", multiple = true)]
struct SuiteFilters {
    /// Keep the positions through which the tally's games played at least N moves (the sum of
    /// the games of the position's moves, transpositions included).
    #[arg(long, value_name = "N")]
    min_games: Option<u64>,
    /// The tally (`polybook tally`) that --min-games counts in.
    #[arg(long, value_name = "FILE.parquet")]
    tally: Option<PathBuf>,
    /// Keep the positions with at least these pieces: letters as in FEN, one per piece (Qq: a
    /// queen each; RRrr: two rooks each), or `queens` (Qq).
    #[arg(long, value_name = "SPEC")]
    material: Option<Material>,
    /// On a scored book: keep the positions whose draw rate by the WDL model (docs/analyse.md)
    /// lies from LO to HI percent (e.g. 48-52).
    #[arg(long, value_name = "LO-HI", value_parser = draw_rate)]
    draw_rate: Option<(f64, f64)>,
    /// Shuffle the suite (the same order for --epd and --pgn; reproducible with --seed).
    #[arg(long)]
    shuffle: bool,
    /// The seed of --shuffle.
    #[arg(long, value_name = "S", default_value_t = 1, requires = "shuffle")]
    seed: u64,
    /// With --epd: add the opcodes `c0` (the line in SAN, the games with --min-games, the score
    /// on a scored book) and `id` (the opening's number from 1).
    #[arg(long)]
    opcodes: bool,
}

/// `--plies A-B` (or `N`, for N-N).
fn plies(s: &str) -> Result<(u32, u32), String> {
    let number = |t: &str| {
        t.trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= 1000)
            .ok_or_else(|| format!("expected plies A-B from 0 to 1000, not {s:?}"))
    };
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => (number(s)?, number(s)?),
    };
    if a > b {
        return Err(format!("{a} is above {b}: give the lower ply first"));
    }
    Ok((a, b))
}

/// `--draw-rate LO-HI`, percentages.
fn draw_rate(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("expected LO-HI, two percentages from 0 to 100 (e.g. 48-52), not {s:?}");
    let (lo, hi) = s.split_once('-').ok_or_else(bad)?;
    let (lo, hi) = (
        percent(lo.trim()).map_err(|_| bad())?,
        percent(hi.trim()).map_err(|_| bad())?,
    );
    if lo > hi {
        return Err(format!("{lo} is above {hi}: give the lower rate first"));
    }
    Ok((lo, hi))
}

pub fn run(args: Args) -> CliResult {
    let mut book = open_book(&args.book)?;
    if let Some(layout) = args.learn {
        book.set_learn_layout(layout);
    }
    if let Some((first, last)) = args.plies.or(args.ply.map(|n| (n, n))) {
        return suite(&args, &book, first, last);
    }
    let name = args.book.file_name().map_or_else(
        || args.book.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let options = ExportOptions {
        max_ply: args.max_ply,
        min_share: args.min_share,
        max_moves: args.max_moves,
        name,
    };
    let mut out = Output::create(args.output.as_deref())?;
    let report = export_pgn(&book, &options, &mut out).map_err(|e| output_error(&args, e))?;
    out.finish()?;
    let line = if args.json {
        serde_json::to_string(&report).map_err(CliError::data)?
    } else {
        format!(
            "{}: {} move{} written{}{}",
            destination(&args),
            report.moves,
            if report.moves == 1 { "" } else { "s" },
            if report.cycles > 0 {
                format!(", {} closing a cycle", report.cycles)
            } else {
                String::new()
            },
            if report.truncated {
                format!(" (cut at --max-moves {})", args.max_moves)
            } else {
                String::new()
            }
        )
    };
    report_line(&args, &line)
}

/// The error for output that could not be written: to `--output`'s file, or to stdout.
fn output_error(args: &Args, e: std::io::Error) -> CliError {
    match &args.output {
        Some(path) => super::output::cannot_write(path, &e),
        None => write_error(e),
    }
}

/// Where the export went, as its summary names it: `--output`'s path, or `stdout`.
fn destination(args: &Args) -> String {
    args.output
        .as_ref()
        .map_or_else(|| "stdout".to_string(), |p| p.display().to_string())
}

/// The summary: on stdout after a file, on stderr when the export has stdout to itself.
fn report_line(args: &Args, line: &str) -> CliResult {
    if args.output.is_some() {
        outln!("{line}")
    } else {
        eprintln!("{line}");
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

/// `--ply N`/`--plies A-B`: the opening suite, as EPD or PGN.
fn suite(args: &Args, book: &Book, first: u32, last: u32) -> CliResult {
    let window = args.eval.min_eval.is_some() || args.eval.max_eval.is_some();
    let needs_scores = match (window, args.filters.draw_rate.is_some()) {
        (true, _) => Some("--min-eval/--max-eval"),
        (false, true) => Some("--draw-rate"),
        (false, false) => None,
    };
    if let Some(options) = needs_scores
        && book.learn_layout() != LearnLayout::Scored
    {
        return Err(CliError::data(format!(
            "{}: has no scores for {options} ('polybook analyse' adds them; --learn prodeo reads a book scored elsewhere)",
            args.book.display()
        )));
    }
    if let (Some(lo), Some(hi)) = (args.eval.min_eval, args.eval.max_eval)
        && lo > hi
    {
        return Err(CliError::usage(format!(
            "--min-eval {lo} is above --max-eval {hi}: no position can lie in that window"
        )));
    }
    match (args.filters.min_games, &args.filters.tally) {
        (Some(n), None) => {
            return Err(CliError::usage(format!(
                "--min-games {n} counts the games of a tally: give one with --tally FILE.parquet ('polybook tally' makes it)"
            )));
        }
        (None, Some(_)) => {
            return Err(CliError::usage(
                "--tally is read for --min-games N: give both, or neither",
            ));
        }
        _ => {}
    }
    let options = SuiteOptions {
        first_ply: first,
        last_ply: last,
        min_share: args.min_share,
        min_eval: args.eval.min_eval,
        max_eval: args.eval.max_eval,
        draw_rate: args.filters.draw_rate,
        draw_model: WdlModel::SELFPLAY,
        material: args.filters.material.clone(),
        min_games: args.filters.min_games,
    };
    let (mut openings, report) = match &args.filters.tally {
        Some(tally) if args.filters.min_games.is_some() => {
            let mut lookup =
                TallyLookup::open(&[tally.as_path()]).map_err(super::tally::tally_error)?;
            let mut failed = None;
            let mut games = |pos: &shakmaty::Chess| match lookup.find(Key::of(pos).0) {
                Ok(pairs) => pairs.iter().map(|p| p.games).sum(),
                Err(e) => {
                    failed.get_or_insert(e);
                    0
                }
            };
            let suite = opening_suite_with(book, &options, &mut games);
            if let Some(e) = failed {
                return Err(super::tally::tally_error(e));
            }
            suite
        }
        _ => opening_suite(book, &options),
    };
    if args.filters.shuffle {
        openings.shuffle(&mut StdRng::seed_from_u64(args.filters.seed));
    }
    let mut text = Vec::new();
    if args.epd {
        write_epd(&openings, args.filters.opcodes, &mut text)
    } else {
        write_pgn_suite(&openings, &mut text)
    }
    .expect("writing to memory");
    let bytes = match args.output.as_deref() {
        Some(path) => compressed(path, text).map_err(|e| output_error(args, e))?,
        None => text,
    };
    let mut out = Output::create(args.output.as_deref())?;
    out.write_all(&bytes).map_err(|e| output_error(args, e))?;
    out.finish()?;
    let at = if first == last {
        format!("at ply {first}")
    } else {
        format!("at plies {first}-{last}")
    };
    let line = if args.json {
        serde_json::to_string(&report).map_err(CliError::data)?
    } else {
        let mut left_out = Vec::new();
        for (n, why) in [
            (report.outside_window, "outside the window"),
            (report.unscored, "without a score"),
            (report.outside_draw_rate, "outside the draw rate"),
            (report.material, "without the material"),
            (report.fewer_games, "in fewer games"),
        ] {
            if n > 0 {
                left_out.push(format!("{n} {why}"));
            }
        }
        format!(
            "{}: {} opening{} {at}{}",
            destination(args),
            report.openings,
            if report.openings == 1 { "" } else { "s" },
            if left_out.is_empty() {
                String::new()
            } else {
                format!(
                    " ({} of {} positions left out: {})",
                    report.positions_at_ply - report.openings,
                    report.positions_at_ply,
                    left_out.join(", ")
                )
            }
        )
    };
    if report.openings == 0 {
        eprintln!(
            "polybook: warning: {}: no opening {at}; wrote an empty suite",
            args.book.display()
        );
    }
    report_line(args, &line)
}

/// The bytes written to `path`: `text` gzipped for a name ending in `.gz`, as a zip archive of
/// one deflated file named as `path` without `.zip` for a name ending in `.zip`, else as it is.
fn compressed(path: &Path, text: Vec<u8>) -> std::io::Result<Vec<u8>> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if name.ends_with(".gz") {
        let mut gz = GzEncoder::new(Vec::new(), Compression::best());
        gz.write_all(&text)?;
        return gz.finish();
    }
    if let Some(inner) = name.strip_suffix(".zip") {
        return zip_one(inner, &text);
    }
    Ok(text)
}

/// A zip archive (PKWARE's APPNOTE) of one file, `name`, holding `data` deflated: its local
/// header, the data, the central directory's one record and its end. The date is 1980-01-01
/// 00:00 (the format's first), so the same suite gives the same bytes.
fn zip_one(name: &str, data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut deflate = DeflateEncoder::new(Vec::new(), Compression::best());
    deflate.write_all(data)?;
    let packed = deflate.finish()?;
    let too_big = || std::io::Error::other("too big for a zip archive without Zip64");
    let size = u32::try_from(data.len()).map_err(|_| too_big())?;
    let packed_size = u32::try_from(packed.len()).map_err(|_| too_big())?;
    let name_len = u16::try_from(name.len()).map_err(|_| too_big())?;
    let crc = crc32fast::hash(data);
    // Version 2.0 needed, flag 0x0800 (the name is UTF-8), method 8 (deflate), time 0, date
    // 1980-01-01, the checksum and sizes.
    let common = |out: &mut Vec<u8>| {
        for v in [20u16, 0x0800, 8, 0, 0x21] {
            out.extend(v.to_le_bytes());
        }
        for v in [crc, packed_size, size] {
            out.extend(v.to_le_bytes());
        }
        out.extend(name_len.to_le_bytes());
    };
    let mut out = Vec::with_capacity(packed.len() + 2 * name.len() + 100);
    out.extend(0x0403_4b50u32.to_le_bytes());
    common(&mut out);
    out.extend(0u16.to_le_bytes()); // extra field length
    out.extend(name.as_bytes());
    out.extend(&packed);
    let directory = u32::try_from(out.len()).map_err(|_| too_big())?;
    out.extend(0x0201_4b50u32.to_le_bytes());
    out.extend(20u16.to_le_bytes()); // made by: version 2.0
    common(&mut out);
    // Extra field and comment lengths, disk 0, internal and external attributes, the local
    // header's offset.
    for v in [0u16, 0, 0, 0] {
        out.extend(v.to_le_bytes());
    }
    out.extend(0u32.to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend(name.as_bytes());
    let directory_size = u32::try_from(out.len()).map_err(|_| too_big())? - directory;
    out.extend(0x0605_4b50u32.to_le_bytes());
    // This disk, the directory's disk, its records here and in all.
    for v in [0u16, 0, 1, 1] {
        out.extend(v.to_le_bytes());
    }
    out.extend(directory_size.to_le_bytes());
    out.extend(directory.to_le_bytes());
    out.extend(0u16.to_le_bytes()); // comment length
    Ok(out)
}

/// The name of a line of moves from the start (its last named position).
fn line_name(line: &[shakmaty::Move]) -> Option<polybook::openings::Opening> {
    let mut pos = shakmaty::Chess::default();
    let mut name = LineName::of_position(&pos);
    for &m in line {
        pos.play_unchecked(m);
        name.push(polybook::book::Key::of(&pos));
    }
    name.name()
}

/// One position per line, its four EPD fields and nothing else: fastchess and cutechess set up
/// the line as a FEN (counters 0 and 1). With `opcodes`, each line adds `c0` (the line of book
/// moves in SAN, then the games through the position when counted and the score when known, e.g.
/// `c0 "1. e4 e5 2. Nf3, games 120, score +0.35";`) and `id` (the opening's number from 1, the
/// `Round` of the same suite written as PGN).
fn write_epd(openings: &[SuiteOpening], opcodes: bool, out: &mut dyn Write) -> std::io::Result<()> {
    for (i, o) in openings.iter().enumerate() {
        if !opcodes {
            writeln!(out, "{}", o.epd())?;
            continue;
        }
        let mut c0 = san_tokens(&o.line).join(" ");
        if let Some(games) = o.games {
            c0.push_str(&format!(", games {games}"));
        }
        if let Some(e) = o.eval {
            c0.push_str(&format!(", score {}", polybook::book::score_text(e)));
        }
        writeln!(
            out,
            "{} c0 \"{}\"; id \"{}\";",
            o.epd(),
            c0.trim_start_matches(", "),
            i + 1
        )?;
    }
    Ok(())
}

/// A line of moves from the start in SAN with move numbers: `1.`, `e4`, `e5`, `2.`, `Nf3`.
fn san_tokens(line: &[shakmaty::Move]) -> Vec<String> {
    let mut pos = shakmaty::Chess::default();
    let mut tokens = Vec::new();
    for (ply, m) in line.iter().enumerate() {
        if ply % 2 == 0 {
            tokens.push(format!("{}.", ply / 2 + 1));
        }
        tokens.push(shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, *m).to_string());
    }
    tokens
}

/// One game per opening: its line of book moves from the start, with the `ECO` and `Opening` tags
/// of the line's name (lichess's table) when it has one, and the score (White's view) as a comment
/// after the last move when the book has one.
fn write_pgn_suite(openings: &[SuiteOpening], out: &mut dyn Write) -> std::io::Result<()> {
    for (i, o) in openings.iter().enumerate() {
        for (name, value) in [
            ("Event", "polybook export"),
            ("Site", "?"),
            ("Date", "????.??.??"),
            ("Round", &(i + 1).to_string()),
            ("White", "?"),
            ("Black", "?"),
            ("Result", "*"),
        ] {
            writeln!(out, "[{name} \"{value}\"]")?;
        }
        if let Some(named) = line_name(&o.line) {
            writeln!(out, "[ECO \"{}\"]", named.eco)?;
            writeln!(out, "[Opening \"{}\"]", named.name)?;
        }
        writeln!(out)?;
        let mut tokens = san_tokens(&o.line);
        if let Some(e) = o.eval {
            tokens.push(format!("{{{}}}", polybook::book::score_text(e)));
        }
        tokens.push("*".to_string());
        write_movetext(&tokens, out)?;
    }
    Ok(())
}
