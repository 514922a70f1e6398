//! The direction of dependencies in `src/`, read from the source, as ARCHITECTURE.md draws it:
//!
//! - each top-level module uses only the modules below it in the layers (the engine knows
//!   positions, not books; `uci` and `arena` both join the engine and the book, and neither leans
//!   on the other; nothing in the library uses the command line);
//! - no circle among the files of one module (so the engine's leaves, `score`, `hash`,
//!   `packed_move`, `options`, `time` and `parameters`, stay leaves, and the TT and the mate
//!   search do not use the search).
//!
//! A file's uses are the `crate::…`, `super::…` and `self::…` paths in its code (in `use` lines,
//! brace groups included, and inline; comments skipped), up to its `#[cfg(test)] mod tests`.
//! The table is the real graph: an edge it declares that no file uses fails too. A path
//! through a `mod.rs` that names an item the `mod.rs` re-exports (`pub use search::Engine`)
//! counts as a use of the file that defines it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::common;

/// What each top-level module of the library may use, read from ARCHITECTURE.md's table of the
/// layers (its first column the module, its last the modules it uses, `—` for none), so that the
/// document and this test cannot drift apart. Anything not listed is refused; the command line
/// (`src/cli`, in the binary) may use everything and nothing can use it.
fn layers() -> BTreeMap<String, Vec<String>> {
    let doc = std::fs::read_to_string(common::root().join("ARCHITECTURE.md")).unwrap();
    let section = doc
        .split("## The layers")
        .nth(1)
        .expect("ARCHITECTURE.md has a section \"The layers\"");
    let mut table = BTreeMap::new();
    for line in section.lines().skip_while(|l| !l.starts_with('|')) {
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        let (first, last) = (cells[0], cells[cells.len() - 1]);
        if !first.starts_with('`') || first.contains("(binary)") {
            continue; // the header, its rule, and the command line's row
        }
        let names = |cell: &str| -> Vec<String> {
            cell.split(',')
                .map(|n| n.trim().trim_matches('`').to_string())
                .filter(|n| !n.is_empty() && n != "—" && n != "everything")
                .collect()
        };
        let module = first.trim_matches('`').to_string();
        assert!(
            table.insert(module.clone(), names(last)).is_none(),
            "ARCHITECTURE.md lists the layer `{module}` twice"
        );
    }
    assert!(
        table.len() > 5,
        "ARCHITECTURE.md's table of the layers was not found"
    );
    table
}

/// A source file and the module path it defines (`src/engine/tt.rs` → `engine::tt`).
struct File {
    module: Vec<String>,
    text: String,
}

/// The code of a source file: all of it up to its `#[cfg(test)] mod tests` section (test-only
/// items above it count: they are code of the file), without comments (line and doc comments; the
/// crate has no block comments).
fn code_of(text: &str) -> String {
    let end = text
        .match_indices("#[cfg(test)]")
        .find(|(at, attribute)| {
            text[at + attribute.len()..]
                .trim_start()
                .starts_with("mod tests")
        })
        .map_or(text.len(), |(at, _)| at);
    let text = &text[..end];
    text.lines()
        .map(|line| &line[..line.find("//").unwrap_or(line.len())])
        .collect::<Vec<_>>()
        .join("\n")
}

fn files(dir: &Path, out: &mut Vec<File>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).unwrap().flatten().collect();
    entries.sort_by_key(|e| e.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(common::root().join("src")).unwrap();
            let mut module: Vec<String> = rel
                .with_extension("")
                .iter()
                .map(|s| s.to_string_lossy().into_owned())
                .collect();
            if module
                .last()
                .is_some_and(|m| m == "mod" || m == "lib" || m == "main")
            {
                module.pop();
            }
            let text = code_of(&std::fs::read_to_string(&path).unwrap());
            out.push(File { module, text });
        }
    }
}

/// The paths a file uses, each as absolute module segments (`["engine", "score", "MATE"]`).
fn used_paths(file: &File) -> Vec<Vec<String>> {
    let mut paths = Vec::new();
    let text = &file.text;
    let bytes = text.as_bytes();
    for prefix in ["crate::", "super::", "self::"] {
        let mut from = 0;
        while let Some(at) = text[from..].find(prefix) {
            let start = from + at;
            from = start + prefix.len();
            // Only whole words: `mycrate::` or `xsuper::` are not these keywords.
            if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'_') {
                continue;
            }
            let base: Vec<String> = match prefix {
                "crate::" => Vec::new(),
                // `super` of a file module is its parent; `self` is the module itself.
                "super::" => file.module[..file.module.len().saturating_sub(1)].to_vec(),
                _ => file.module.clone(),
            };
            for tail in expand(&text[from..]) {
                let mut path = base.clone();
                path.extend(tail);
                paths.push(path);
            }
        }
    }
    paths
}

/// The paths written at the start of `s` (`a::b::{c, d::e}` → `a::b::c`, `a::b::d::e`).
fn expand(s: &str) -> Vec<Vec<String>> {
    let mut segments = Vec::new();
    let mut rest = s;
    loop {
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let end = group
                .char_indices()
                .find(|&(_, c)| {
                    depth += match c {
                        '{' => 1,
                        '}' => -1,
                        _ => 0,
                    };
                    depth == 0
                })
                .map_or(group.len(), |(i, _)| i);
            let mut out = Vec::new();
            let (mut level, mut item) = (0, String::new());
            for c in group[..end].chars().chain([',']) {
                match c {
                    '{' => level += 1,
                    '}' => level -= 1,
                    _ => {}
                }
                if c == ',' && level == 0 {
                    // `Clock as ClockState` uses `Clock`.
                    let item_text: String = item
                        .split(" as ")
                        .next()
                        .unwrap_or_default()
                        .split_whitespace()
                        .collect();
                    if !item_text.is_empty() && item_text != "self" {
                        for tail in expand(&item_text) {
                            let mut path = segments.clone();
                            path.extend(tail);
                            out.push(path);
                        }
                    } else if item_text == "self" {
                        out.push(segments.clone());
                    }
                    item.clear();
                } else {
                    item.push(c);
                }
            }
            return out;
        }
        let len = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        if len > 0 {
            segments.push(rest[..len].to_string());
        }
        rest = &rest[len..];
        match rest.strip_prefix("::") {
            Some(r) => rest = r,
            None => return vec![segments],
        }
    }
}

/// The file (its module path) that a used path lands in: the longest prefix that is a file,
/// followed through a `mod.rs` re-export when the next segment is one.
fn target(
    path: &[String],
    modules: &BTreeSet<Vec<String>>,
    reexports: &BTreeMap<(Vec<String>, String), Vec<String>>,
) -> Option<Vec<String>> {
    let mut best = None;
    for n in (1..=path.len()).rev() {
        if modules.contains(&path[..n]) {
            best = Some(n);
            break;
        }
    }
    let n = best?;
    let module = path[..n].to_vec();
    if let Some(next) = path.get(n)
        && let Some(source) = reexports.get(&(module.clone(), next.clone()))
    {
        return Some(source.clone());
    }
    Some(module)
}

/// `pub use sub::{A, B}` in a module's root file: A and B are defined in `module::sub`.
fn reexports(
    files: &[File],
    modules: &BTreeSet<Vec<String>>,
) -> BTreeMap<(Vec<String>, String), Vec<String>> {
    let mut map = BTreeMap::new();
    for f in files {
        for line in f.text.split(';') {
            let line = line.trim();
            let Some(rest) = line.strip_prefix("pub use ") else {
                continue;
            };
            for tail in expand(rest.trim_start_matches("self::")) {
                let Some(name) = tail.last() else { continue };
                let mut path = f.module.clone();
                path.extend(tail[..tail.len() - 1].iter().cloned());
                if modules.contains(&path) && path != f.module {
                    map.insert((f.module.clone(), name.clone()), path);
                }
            }
        }
    }
    map
}

/// What the library's files use: the uses across top-level modules (file, path, module used)
/// and, within a module, the files each file uses.
struct Uses {
    across: Vec<(String, String, String)>,
    within: BTreeMap<String, BTreeSet<String>>,
}

fn uses() -> Uses {
    let mut all = Vec::new();
    files(&common::root().join("src"), &mut all);
    // The library's files; the binary's (main.rs, cli/) stand apart.
    let all: Vec<File> = all
        .into_iter()
        .filter(|f| f.module.first().is_some_and(|m| m != "cli"))
        .collect();
    let modules: BTreeSet<Vec<String>> = all.iter().map(|f| f.module.clone()).collect();
    let reexports = reexports(&all, &modules);
    let mut uses = Uses {
        across: Vec::new(),
        within: BTreeMap::new(),
    };
    for f in &all {
        let name = f.module.join("::");
        uses.within.entry(name.clone()).or_default();
        for path in used_paths(f) {
            let Some(to) = target(&path, &modules, &reexports) else {
                continue;
            };
            if to[0] != f.module[0] {
                uses.across
                    .push((name.clone(), path.join("::"), to[0].clone()));
            } else if to != f.module && !f.module.starts_with(&to) {
                // A file's use of its own parent module (a `mod.rs`) is no edge: that file only
                // declares and re-exports its children.
                uses.within.get_mut(&name).unwrap().insert(to.join("::"));
            }
        }
    }
    uses
}

#[test]
fn the_layers_lean_only_downwards() {
    let layers = layers();
    let found = uses();
    for file in found.within.keys() {
        let top = file.split("::").next().unwrap();
        assert!(
            layers.contains_key(top),
            "src/{top} is a new top-level module: give it a row in ARCHITECTURE.md's table of the layers"
        );
    }
    let mut wrong = Vec::new();
    for (file, path, to) in &found.across {
        let allowed = &layers[file.split("::").next().unwrap()];
        if !allowed.contains(to) {
            wrong.push(format!("{file} uses {path}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "uses against the layers:\n{}",
        wrong.join("\n")
    );
    // And every edge the table declares is used by some file of that module.
    let used: BTreeSet<(String, String)> = found
        .across
        .iter()
        .map(|(file, _, to)| (file.split("::").next().unwrap().to_string(), to.clone()))
        .collect();
    let unused: Vec<String> = layers
        .iter()
        .flat_map(|(module, allowed)| allowed.iter().map(move |to| (module, to)))
        .filter(|&(module, to)| !used.contains(&(module.clone(), to.clone())))
        .map(|(module, to)| format!("`{module}` is declared to use `{to}` but does not"))
        .collect();
    assert!(
        unused.is_empty(),
        "ARCHITECTURE.md's table of the layers declares edges the code does not have:\n{}",
        unused.join("\n")
    );
}

/// The circles of `graph` (each once, from its first node in name order).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let mut found = Vec::new();
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut stack = vec![vec![start.clone()]];
        while let Some(chain) = stack.pop() {
            for next in graph.get(chain.last().unwrap()).into_iter().flatten() {
                if next == start && chain.iter().all(|m| m >= start) {
                    found.push(format!("{} -> {next}", chain.join(" -> ")));
                } else if seen.insert(next.clone()) {
                    let mut longer = chain.clone();
                    longer.push(next.clone());
                    stack.push(longer);
                }
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn the_files_of_a_module_use_each_other_without_a_circle() {
    let within = uses().within;
    // The test sees real uses: the search uses the transposition table.
    assert!(
        within["engine::search"].contains("engine::tt"),
        "{within:#?}"
    );
    let circles = circles(&within);
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
    // The engine's leaves use nothing of the engine; the clock only its tuned shares; the TT and
    // the mate search not the search.
    for leaf in ["score", "hash", "packed_move", "options", "parameters"] {
        let used = &within[&format!("engine::{leaf}")];
        assert!(
            used.is_empty(),
            "engine/{leaf}.rs is a leaf but uses {used:?}"
        );
    }
    let time: Vec<&String> = within["engine::time"].iter().collect();
    assert_eq!(time, ["engine::parameters"], "engine/time.rs");
    for file in ["tt", "mate"] {
        let used = &within[&format!("engine::{file}")];
        for search in ["engine::search", "engine::negamax"] {
            assert!(!used.contains(search), "engine/{file}.rs uses {search}");
        }
    }
}

#[test]
fn the_reader_sees_uses_and_skips_comments() {
    let code = code_of(
        "use super::{eval::Params, see as x, self};\n// use super::search\nlet x = crate::text::quote(s); // crate::book\n#[cfg(test)]\nfn only_in_tests() { crate::hash::key(); }\n#[cfg(test)]\nmod tests { use crate::arena; }",
    );
    let file = File {
        module: vec!["engine".into(), "search".into()],
        text: code,
    };
    let paths: Vec<String> = used_paths(&file).iter().map(|p| p.join("::")).collect();
    assert_eq!(
        paths,
        [
            "text::quote",
            "hash::key",
            "engine::eval::Params",
            "engine::see",
            "engine"
        ],
        "crate:: first, then super::"
    );
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), BTreeSet::from(["b".to_string()]));
    graph.insert("b".to_string(), BTreeSet::from(["a".to_string()]));
    assert_eq!(circles(&graph), ["a -> b -> a"]);
    graph.insert("b".to_string(), BTreeSet::new());
    assert!(circles(&graph).is_empty());
}
