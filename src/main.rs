//! The `runner` binary: parse the command line, run the library, exit with its code.

use clap::Parser;
use runner::cli::{Cli, Command, ReportCommand};

fn main() -> anyhow::Result<()> {
    // SAFETY: the first thing the process does, before any other thread exists.
    unsafe { runner::sandbox::protect::harden_process() };
    // Orphans of the commands runner starts come back to it, to be stopped with their call.
    runner::process::orphans::become_subreaper();
    let argv = runner::cli::foreign::with_default_command(std::env::args_os().collect());
    if let Some(why) = runner::cli::foreign::check(&argv) {
        clap::Error::raw(clap::error::ErrorKind::UnknownArgument, format!("{why}\n")).exit();
    }
    let cli = Cli::parse_from(argv);
    runner::log::init(&cli.verbosity);
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
            let code = rt.block_on(runner::app::exec(*args));
            // Every report is written: work a signal left behind (a cut-short task's blocking
            // git work) does not hold the exit up.
            rt.shutdown_background();
            code
        }
        Command::Resume(args) => {
            let args = args.into_exec_args()?;
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()?;
            let code = rt.block_on(runner::app::exec(args));
            rt.shutdown_background();
            code
        }
    };
    // What a command left running and came back to runner too late for its call's sweep.
    let stopped = runner::process::stop_orphans();
    if stopped > 0 {
        tracing::warn!(
            stopped,
            "stopped processes that commands left running after their call ended"
        );
    }
    std::process::exit(code);
}
