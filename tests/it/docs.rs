//! The documents that must not drift from the code: the command reference, generated from the
//! same clap definitions `--help` prints, and the links between the documents.

use crate::common;
use common::{polybook_ok, root};

/// `docs/reference.md` is what `polybook reference` prints today.
#[test]
fn the_command_reference_is_what_the_code_prints() {
    let generated = polybook_ok(&["reference"]);
    let committed = std::fs::read_to_string(root().join("docs/reference.md")).unwrap();
    assert!(
        generated == committed,
        "docs/reference.md differs from the code's help: run \
         `cargo run --release -- reference > docs/reference.md` and commit it"
    );
    // Every command is in it, with its options as --help lists them.
    for name in ["build", "probe", "analyse", "export", "match", "uci"] {
        let help = polybook_ok(&[name, "--help"]);
        let heading = format!("## polybook {name}\n\n```text\n");
        let at = committed.find(&heading).expect(name) + heading.len();
        let first = help.lines().next().unwrap();
        assert!(committed[at..].starts_with(first), "{name}");
    }
}

/// Every relative link of the Markdown documents leads to a file of the repository.
#[test]
fn the_documents_link_to_files_that_exist() {
    let mut docs = vec![
        root().join("README.md"),
        root().join("BENCHMARKS.md"),
        root().join("ARCHITECTURE.md"),
    ];
    for e in std::fs::read_dir(root().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            docs.push(p);
        }
    }
    let mut broken = Vec::new();
    for doc in &docs {
        let text = std::fs::read_to_string(doc).unwrap();
        for (i, _) in text.match_indices("](") {
            let rest = &text[i + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = rest[..end].split('#').next().unwrap();
            if target.is_empty()
                || target.contains("://")
                || target.starts_with("mailto:")
                || target.contains(' ')
            {
                continue;
            }
            if !doc.parent().unwrap().join(target).exists() {
                broken.push(format!(
                    "{}: {target}",
                    doc.strip_prefix(root()).unwrap().display()
                ));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}
