//! `polybook reference` (hidden): the command-line reference, `docs/reference.md`, generated from
//! the same clap definitions that `--help` prints, so that the document cannot drift from the
//! code (a test compares the committed file with this output).

use clap::CommandFactory;

use super::{Cli, CliResult};

/// Print the Markdown reference of every command on standard output.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_: Args) -> CliResult {
    outln!("{}", markdown().trim_end())
}

/// The reference: a list of the commands, then each command's long help as `--help` prints it.
pub fn markdown() -> String {
    let mut cli = Cli::command();
    cli.build();
    let mut out = String::from(
        "# Command reference\n\n\
         Every `polybook` command with its options, as `polybook COMMAND --help` prints them.\n\
         This file is generated: `cargo run --release -- reference > docs/reference.md` writes it\n\
         again, and a test fails when it differs from what the code prints. Task-oriented help is\n\
         in [the guide](guide.md); the UCI options are in [uci.md](uci.md), the file and JSON\n\
         formats in [formats.md](formats.md).\n\n",
    );
    let commands: Vec<clap::Command> = cli
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .cloned()
        .collect();
    out.push_str("| command | what it does |\n| --- | --- |\n");
    for c in &commands {
        let name = c.get_name();
        let about = c
            .get_about()
            .map(|a| a.to_string().replace('|', "\\|"))
            .unwrap_or_default();
        out.push_str(&format!("| [`{name}`](#polybook-{name}) | {about} |\n"));
    }
    out.push('\n');
    for mut c in commands {
        let help = c.render_long_help().to_string();
        let help: Vec<&str> = help.lines().map(str::trim_end).collect();
        out.push_str(&format!(
            "## polybook {}\n\n```text\n{}\n```\n\n",
            c.get_name(),
            help.join("\n").trim()
        ));
    }
    out
}
