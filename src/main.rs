//! The `runner` binary: parse the command line, run the library, exit with its code.

use clap::Parser;
use tracing_subscriber::EnvFilter;

use runner::cli::{Cli, Command, ReportCommand};

/// Log to stderr through [`runner::redact::LogWriter`]. A log line that cannot be written is
/// dropped: `log_internal_errors(false)` keeps tracing from reporting it with `eprintln!`,
/// which panics when stderr itself is the problem (a closed pipe, a full disk).
fn init_logging() {
    let filter = EnvFilter::try_from_env("RUNNER_LOG")
        .or_else(|_| EnvFilter::try_from_default_env())
        .unwrap_or_else(|_| EnvFilter::new("runner=info,warn"));
    tracing_subscriber::fmt()
        .with_writer(runner::redact::LogWriter)
        .log_internal_errors(false)
        .with_env_filter(filter)
        .with_target(false)
        .with_ansi(
            std::env::var_os("NO_COLOR").is_none()
                && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        )
        .init();
}

fn main() -> anyhow::Result<()> {
    // SAFETY: the first thing the process does, before any other thread exists.
    unsafe { runner::sandbox::protect::harden_process() };
    let cli = Cli::parse();
    init_logging();
    let code = match cli.command {
        Command::Schema => runner::app::schema(),
        Command::Init(args) => runner::init::run(&args),
        Command::Validate { paths } => runner::app::validate(&paths),
        Command::Report(ReportCommand::Merge { inputs, output }) => {
            runner::app::report_merge(&inputs, &output)
        }
        Command::Exec(args) => {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            rt.block_on(runner::app::exec(*args))
        }
        Command::Resume(args) => {
            let args = args.into_exec_args()?;
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            rt.block_on(runner::app::exec(args))
        }
    };
    std::process::exit(code);
}
