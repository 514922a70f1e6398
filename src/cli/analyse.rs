//! `polybook analyse`: a book scored by an engine, the scores backed up its tree, written into the
//! learn fields in ProDeo's layout (the library: `polybook::analysis`).

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use polybook::analysis::cache::{cache_header, cache_path};
use polybook::analysis::positions::book_positions;
use polybook::analysis::{
    self, AnalyseError, AnalysisLimits, Cache, EngineChoice, ExpandOptions, Graph, Priority,
    RunOptions, WeightRule,
};
use polybook::arena::player::EngineSpec;
use polybook::book::{Key, MoveScore, score_text};
use polybook::engine::tt::TranspositionTable;
use polybook::inspect::ProblemKind;
use polybook::position::fen_of;
use shakmaty::CastlingMode;
use shakmaty::uci::UciMove;

use super::output::clause;
use super::position::PositionArgs;
use super::progress::Bar;
use super::{CliError, CliResult, open_book};

/// `--expand-priority`'s values.
#[derive(Clone, Copy, clap::ValueEnum)]
enum PriorityArg {
    Lincke,
    Reach,
}

#[derive(clap::Args)]
pub struct Args {
    /// The book to analyse (.bin).
    book: PathBuf,
    /// The analysed book to write (with the mark of a scored book first: see docs/formats.md).
    #[arg(short, long, value_name = "OUT.bin")]
    output: PathBuf,
    /// Walk the book from this position (with --moves; default: the start position) ...
    #[command(flatten)]
    position: PositionArgs,
    /// ... and from every book position of this file too: FEN or EPD lines, or PGN games (each
    /// position of their main lines), for positions the book's own moves do not reach.
    #[arg(long, value_name = "FILE")]
    positions: Option<PathBuf>,
    /// The engine: builtin (polybook's own search, in this process) or cmd:PROGRAM [ARGS] (any
    /// UCI engine).
    #[arg(long, default_value = "builtin", value_name = "SPEC")]
    engine: String,
    /// A UCI option for a cmd: engine, NAME=VALUE (repeatable).
    #[arg(long = "option", value_name = "NAME=VALUE")]
    options: Vec<String>,
    /// Nodes per position (the default: 20000 when no limit is given).
    #[arg(long)]
    nodes: Option<u64>,
    /// Depth per position.
    #[arg(long)]
    depth: Option<u32>,
    /// Milliseconds per position (not reproducible: scores then depend on the machine).
    #[arg(long, value_name = "MS")]
    movetime: Option<u64>,
    /// Engines analysing at once (threads for the builtin engine, processes for a UCI engine).
    #[arg(long, default_value_t = 1)]
    concurrency: usize,
    /// The builtin engine's hash table per engine, in MB.
    #[arg(long, default_value_t = 16, value_name = "MB")]
    hash: usize,
    /// Carry on from the cache of an earlier run (OUT.bin.analysis); with no cache, start.
    #[arg(long)]
    resume: bool,
    /// Set the weights from the scores (score: the best move 100, down to 1 at --margin, refuted
    /// moves 0) or keep them (keep).
    #[arg(long, default_value = "keep", value_name = "keep|score")]
    weights: String,
    /// The loss in centipawns at which --weights score gives a move weight 0.
    #[arg(long, default_value_t = 50, value_name = "CP")]
    margin: i32,
    /// Leave out the book moves that lose more than CP centipawns against their position's value.
    #[arg(long, value_name = "CP")]
    max_loss: Option<i32>,
    /// Write every analysed position as JSON Lines to this file (key, FEN, whether it is a book
    /// position, the engine's score and depth, and a book position's backed-up value).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Seconds a UCI engine may take over one position before it counts as hung (restarted, the
    /// position tried again).
    #[arg(long, default_value_t = 120, value_name = "SECONDS")]
    engine_timeout: u64,
    /// Grow the book where it is thin or wrong: add the engine's best move outside the book
    /// where it beats the book's best by --expand-margin, or where fewer than --expand-width book
    /// moves lie within the margin of the best; continue each new line --expand-depth moves;
    /// analyse again, and repeat (see docs/analyse.md).
    #[arg(long)]
    expand: bool,
    /// With --expand: centipawns by which the engine's move must beat the book's best, and the
    /// window below the best in which moves count as good.
    #[arg(long, default_value_t = 30, value_name = "CP", requires = "expand")]
    expand_margin: i32,
    /// With --expand: the fewest good moves a book position should have.
    #[arg(long, default_value_t = 2, value_name = "N", requires = "expand")]
    expand_width: usize,
    /// With --expand: how many of the engine's moves follow each added move.
    #[arg(long, default_value_t = 4, value_name = "PLIES", requires = "expand")]
    expand_depth: u32,
    /// With --expand: the most moves added in all.
    #[arg(long, default_value_t = 1000, value_name = "N", requires = "expand")]
    expand_positions: usize,
    /// With --expand: which candidates come first: `lincke` (the cheapest line from the root,
    /// both sides playing the book's best) or `reach` (the likeliest to be reached by a game
    /// played from the book by score against an opponent playing it by weight, times what the
    /// move gains; the book's ends count too).
    #[arg(long, value_enum, default_value_t = PriorityArg::Lincke, value_name = "ORDER", requires = "expand")]
    expand_priority: PriorityArg,
    /// With --expand: only positions fewer than this many plies from the root get new moves.
    #[arg(long, default_value_t = 20, value_name = "PLIES", requires = "expand")]
    max_ply: u32,
    /// No progress bar.
    #[arg(short, long)]
    quiet: bool,
}

pub fn run(args: Args) -> CliResult {
    let started = Instant::now();
    let limits = AnalysisLimits {
        nodes: args
            .nodes
            .or((args.depth.is_none() && args.movetime.is_none()).then_some(20_000)),
        depth: args.depth,
        movetime: args.movetime.map(Duration::from_millis),
    };
    if args.concurrency == 0 {
        return Err(CliError::usage("--concurrency must be at least 1"));
    }
    let weights = match args.weights.as_str() {
        "keep" => WeightRule::Keep,
        "score" => WeightRule::Score {
            margin: args.margin.max(0),
        },
        w => {
            return Err(CliError::usage(format!(
                "unknown --weights {}: expected keep or score",
                polybook::text::quote(w)
            )));
        }
    };
    let engine = if args.engine == "builtin" {
        if !args.options.is_empty() {
            return Err(CliError::usage(
                "--option is for a cmd: engine; the builtin engine takes --hash",
            ));
        }
        // One table per engine.
        TranspositionTable::check_size(args.hash.max(1), args.concurrency)
            .map_err(super::args::hash_error)?;
        EngineChoice::Builtin { hash_mb: args.hash }
    } else {
        let exe = std::env::current_exe().unwrap_or_else(|_| "polybook".into());
        let mut spec = EngineSpec::parse(&args.engine, &exe).map_err(CliError::usage)?;
        for o in &args.options {
            spec.options
                .push(polybook::arena::player::parse_option(o).map_err(CliError::usage)?);
        }
        EngineChoice::Uci(spec)
    };
    // Repeated entries or impossible move codes: their scores could not be told apart. An
    // unsorted book is read (with the reader's warning) and written sorted.
    super::refuse_corrupt(
        &args.book,
        &[ProblemKind::Duplicate, ProblemKind::ImpossibleMove],
    )?;
    if args.expand_margin < 0 {
        return Err(CliError::usage("--expand-margin must be 0 or more"));
    }
    let expand = args.expand.then_some(ExpandOptions {
        margin: args.expand_margin,
        width: args.expand_width,
        max_ply: args.max_ply,
        depth: args.expand_depth,
        positions: args.expand_positions,
        priority: match args.expand_priority {
            PriorityArg::Lincke => Priority::Lincke,
            PriorityArg::Reach => Priority::Reach,
        },
    });
    let mut book = open_book(&args.book)?;
    let cache_path = cache_path(&args.output);
    let header = cache_header(&book, &engine, &limits);
    let mut cache = Cache::open(&cache_path, &header, args.resume).map_err(CliError::data)?;
    if cache.damaged > 0 {
        eprintln!(
            "polybook: warning: {}: {} damaged line{} (wrong checksum or form) not used: {} analysed again",
            cache_path.display(),
            cache.damaged,
            if cache.damaged == 1 { "" } else { "s" },
            if cache.damaged == 1 {
                "its position is"
            } else {
                "their positions are"
            }
        );
    }
    let mut roots = vec![args.position.position()?];
    if let Some(path) = &args.positions {
        roots.extend(book_positions(path, &book).map_err(CliError::data)?);
    }
    let mut graph = Graph::walk(&book, &roots);
    if graph.roots.is_empty() {
        return Err(CliError::data(format!(
            "{}: no root position is in the book (the start position, or give --fen/--moves/--positions)",
            args.book.display()
        )));
    }
    let mut tasks = analysis::tasks(&graph);
    eprintln!(
        "{}: {} entries; the walk reached {} of its {} positions (saturation {:.1} %), {} leaves; {} positions to analyse",
        args.book.display(),
        book.len(),
        graph.nodes.len(),
        graph.book_keys,
        100.0 * graph.saturation(),
        graph.leaves.len(),
        tasks.len()
    );
    let resumed = cache.verdicts.len();
    let show = !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = Bar::analysis(show);
    let cancel = super::interrupt::flag();
    let opts = RunOptions {
        engine,
        limits,
        concurrency: args.concurrency,
        timeout: Duration::from_secs(args.engine_timeout.max(1))
            + limits.movetime.unwrap_or_default(),
    };
    let ran = match &expand {
        None => analysis::run_tasks(&tasks, &mut cache, &opts, &cancel, &bar).map(|()| None),
        Some(x) => analysis::grow(&book, &roots, &mut cache, &opts, x, &cancel, &bar).map(Some),
    };
    bar.finish();
    let analysed = cache.verdicts.len();
    let grown = match ran {
        Ok(grown) => grown,
        Err(AnalyseError::Interrupted) => {
            let of = clause(expand.is_none(), || format!(" of {}", tasks.len()));
            return Err(CliError::interrupted(format!(
                "interrupted: {analysed}{of} positions analysed are kept in {}; --resume carries on; no book written",
                cache_path.display()
            )));
        }
        Err(e) => {
            return Err(CliError::data(format!(
                "{e}; {analysed} analysed positions are kept in {}, --resume carries on; no book written",
                cache_path.display()
            )));
        }
    };
    let (verdicts, backup, expanded) = match grown {
        Some(g) => {
            (book, graph, tasks) = (g.book, g.graph, g.tasks);
            (g.verdicts, g.backup, Some(g.report))
        }
        None => {
            let verdicts = analysis::verdicts_by_key(&tasks, &cache);
            let backup = analysis::back_up(&graph, &verdicts);
            (verdicts, backup, None)
        }
    };
    let (entries, report) = analysis::scored_entries(&book, &backup, weights, args.max_loss);
    if let Some(path) = &args.json {
        write_json(path, &tasks, &verdicts, &backup)?;
    }
    if let Some(x) = &expanded {
        eprintln!(
            "expanded: {} moves added ({} better than the book's, {} where it was thin, {} carrying new lines on) in {} rounds{}",
            x.added(),
            x.better,
            x.thin,
            x.continued,
            x.rounds,
            if x.budget_spent {
                "; --expand-positions reached"
            } else {
                ""
            }
        );
    }
    analysis::write_scored_book(&args.output, &entries).map_err(CliError::data)?;
    let root_value = graph
        .roots
        .first()
        .and_then(|r| backup.values.get(r))
        .map(|v| {
            format!(
                "; the root's value {} (depth {})",
                score_text(v.score),
                v.depth
            )
        })
        .unwrap_or_default();
    let pruned = clause(report.pruned > 0, || {
        format!(", {} pruned by --max-loss", report.pruned)
    });
    let reweighted = clause(weights != WeightRule::Keep, || {
        format!(", {} reweighted", report.reweighted)
    });
    eprintln!(
        "{}: {} entries, {} scored{pruned}{reweighted}; {} positions analysed ({} from the cache) in {:.1} s{root_value}",
        args.output.display(),
        report.entries,
        report.scored,
        tasks.len(),
        resumed.min(tasks.len()),
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The analysed positions as JSON Lines.
fn write_json(
    path: &Path,
    tasks: &[analysis::Task],
    verdicts: &analysis::Verdicts,
    backup: &analysis::Backup,
) -> CliResult {
    let file = polybook::atomic::AtomicFile::create(path)
        .map_err(|e| super::file_error("write", path, &e))?;
    let mut out = BufWriter::new(file);
    let mut write = || -> std::io::Result<()> {
        for t in tasks {
            let Some(v) = verdicts.get(&t.key) else {
                continue;
            };
            let mut obj = serde_json::json!({
                "key": Key(t.key).to_string(),
                "fen": fen_of(&t.pos),
                "in_book": t.in_book,
                "score": v.score,
                "depth": v.depth,
                "text": MoveScore::new(v.score, v.depth).text(),
            });
            if let Some(m) = v.best.and_then(|m| m.to_move(&t.pos)) {
                obj["best"] = UciMove::from_move(m, CastlingMode::Standard)
                    .to_string()
                    .into();
            }
            if t.in_book
                && let Some(value) = backup.values.get(&t.key)
            {
                obj["value"] = value.score.into();
            }
            serde_json::to_writer(&mut out, &obj)?;
            out.write_all(b"\n")?;
        }
        out.flush()
    };
    write().map_err(|e| super::file_error("write", path, &e))?;
    out.into_inner()
        .map_err(|e| super::file_error("write", path, e.error()))?
        .commit(false)
        .map_err(|e| super::file_error("write", path, &e))
}
