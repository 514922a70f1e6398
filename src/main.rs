//! The `polybook` command line: parse the arguments and hand over to one command.

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
