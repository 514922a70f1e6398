//! The direction of dependencies in `src/`, read from the source: which module's code names
//! which (`use crate::x`, `use super::x`, `crate::x::f(..)`; comments are skipped).
//!
//! - No circle among the engine's files: each file of `src/engine` uses only files that do not
//!   use it back, directly or through others (so the leaves, `score`, `hash`, `packed_move`,
//!   stay leaves).
//! - The engine knows positions, not books, and none of the layers above it.
//! - `uci` and `arena` both join the engine and the book, and neither leans on the other.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The source with comments removed (line comments and doc comments; the crate has no block
/// comments).
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(|line| match line.find("//") {
            Some(i) => &line[..i],
            None => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The names that follow `prefix` in `code`: `super::eval` gives `eval`, and a group
/// `super::{eval::X, see}` gives `eval` and `see`.
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = BTreeSet::new();
    for (i, _) in code.match_indices(prefix) {
        let rest = &code[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name = ident(item.trim());
                if !name.is_empty() {
                    names.insert(name);
                }
            }
        } else {
            let name = ident(rest);
            if !name.is_empty() {
                names.insert(name);
            }
        }
    }
    names
}

fn src() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/src"))
}

/// A circle in `graph`, if there is one (as the list of its nodes).
fn find_circle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|n| n == node) {
            let mut circle = path[i..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    for node in graph.keys() {
        if let Some(c) = visit(node, graph, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn the_engine_files_use_each_other_without_a_circle() {
    let dir = src().join("engine");
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_string_lossy().to_string();
        if path.extension().is_some_and(|e| e == "rs") && stem != "mod" {
            files.insert(stem);
        }
    }
    let mut graph = BTreeMap::new();
    for file in &files {
        let code = code_of(&dir.join(format!("{file}.rs")));
        let mut uses = names_after(&code, "super::");
        uses.extend(names_after(&code, "crate::engine::"));
        uses.retain(|u| files.contains(u) && u != file);
        graph.insert(file.clone(), uses);
    }
    // The leaves use nothing of the engine.
    for leaf in ["score", "hash", "packed_move", "options", "time"] {
        assert_eq!(graph[leaf], BTreeSet::new(), "engine/{leaf}.rs is a leaf");
    }
    for file in ["tt", "mate"] {
        assert!(
            !graph[file].contains("search"),
            "engine/{file}.rs uses the search"
        );
        assert!(
            !graph[file].contains("negamax"),
            "engine/{file}.rs uses the search"
        );
    }
    assert_eq!(
        find_circle(&graph),
        None,
        "a circle among src/engine: {graph:#?}"
    );
}

/// The top-level modules each file under `dir` (or the file `dir`.rs) names with `crate::`.
fn crate_uses(module: &str) -> BTreeSet<String> {
    let mut uses = BTreeSet::new();
    let mut paths = vec![src().join(format!("{module}.rs"))];
    let dir = src().join(module);
    if dir.is_dir() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            paths.push(entry.unwrap().path());
        }
    }
    for path in paths.into_iter().filter(|p| p.is_file()) {
        uses.extend(names_after(&code_of(&path), "crate::"));
    }
    uses.remove(module);
    uses
}

#[test]
fn the_layers_lean_only_downwards() {
    let engine = crate_uses("engine");
    for above in ["book", "build", "inspect", "uci", "arena", "cli"] {
        assert!(!engine.contains(above), "engine uses crate::{above}");
    }
    assert!(
        !crate_uses("arena").contains("uci"),
        "arena uses crate::uci"
    );
    assert!(
        !crate_uses("uci").contains("arena"),
        "uci uses crate::arena"
    );
}

#[test]
fn the_reader_sees_uses_and_skips_comments() {
    let code =
        "use super::{eval::Params, see};\n// use super::search\nlet x = crate::text::quote(s);";
    let code = code
        .lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    assert_eq!(
        names_after(&code, "super::"),
        ["eval", "see"].map(String::from).into()
    );
    assert_eq!(
        names_after(&code, "crate::"),
        ["text"].map(String::from).into()
    );
    let mut graph = BTreeMap::new();
    graph.insert("a".to_string(), ["b".to_string()].into());
    graph.insert("b".to_string(), ["a".to_string()].into());
    assert!(find_circle(&graph).is_some());
    graph.insert("b".to_string(), BTreeSet::new());
    assert_eq!(find_circle(&graph), None);
}
