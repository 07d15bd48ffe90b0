//! Logging: how stderr is set up ([`init`]: the filter from `RUNNER_LOG` or `-v`/`-q`, and the
//! format — [`human::HumanFormat`] on a terminal, the full structured format elsewhere, JSON
//! lines with `RUNNER_LOG_FORMAT=json`), and the route every log line takes: into the running
//! task's buffer when its log is being buffered (concurrent tasks in GitHub Actions, written
//! later as one `::group::`), else to stderr around the progress line. Every line passes through
//! [`writer::LogWriter`]; a line that cannot be written is dropped.

pub mod human;
pub(crate) mod writer;

use std::future::Future;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use clap::Args;
use tracing_subscriber::EnvFilter;

/// Targets of the shell parser's (brush-parser) debug logs: token and parse dumps, off unless
/// a filter names them.
const SHELL_PARSER_TARGETS: &[&str] = &["tokenize", "parse", "expansion", "arithmetic"];

/// Set by [`init`] for `-q`: no progress line either.
static QUIET: AtomicBool = AtomicBool::new(false);

/// The format [`init`] chose (0 human, 1 full, 2 json).
static FORMAT: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(1);

/// The log format in use (the full format before [`init`]).
pub fn format() -> LogFormat {
    match FORMAT.load(Ordering::Relaxed) {
        0 => LogFormat::Human,
        2 => LogFormat::Json,
        _ => LogFormat::Full,
    }
}

/// Whether `-q/--quiet` was given.
pub fn quiet() -> bool {
    QUIET.load(Ordering::Relaxed)
}

/// The log format on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// For a person at a terminal ([`human::HumanFormat`]).
    Human = 0,
    /// tracing's full format: timestamp, level, message, `key=value` fields.
    Full = 1,
    /// One JSON object per line.
    Json = 2,
}

impl LogFormat {
    /// The format for `RUNNER_LOG_FORMAT` (`human`, `full` or `json`), else by whether stderr
    /// is a terminal.
    pub fn choose(env: Option<&str>, stderr_is_terminal: bool) -> LogFormat {
        match env.map(str::trim) {
            Some("json") => LogFormat::Json,
            Some("full") => LogFormat::Full,
            Some("human") => LogFormat::Human,
            _ if stderr_is_terminal => LogFormat::Human,
            _ => LogFormat::Full,
        }
    }
}

/// `-v`/`-q`: how much runner logs on stderr (`RUNNER_LOG` overrides both).
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct Verbosity {
    /// More log detail on stderr: -v for debug logs of runner, -vv for trace logs.
    #[arg(short = 'v', long = "verbose", action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    /// Only warnings and errors on stderr, and no progress line.
    #[arg(short = 'q', long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

/// The log filter: `RUNNER_LOG` (or `RUST_LOG`) when set, else by `-v`/`-q`; the shell
/// parser's targets are off unless the filter names them.
pub fn filter_directives(env: Option<&str>, v: &Verbosity) -> String {
    let mut directives = match env.map(str::trim).filter(|s| !s.is_empty()) {
        Some(e) => e.to_string(),
        None if v.quiet => "warn".to_string(),
        None => match v.verbose {
            0 => "runner=info,warn",
            1 => "runner=debug,info",
            _ => "runner=trace,debug",
        }
        .to_string(),
    };
    for t in SHELL_PARSER_TARGETS {
        if !directives.split(',').any(|d| d.trim().starts_with(t)) {
            directives.push_str(&format!(",{t}=off"));
        }
    }
    directives
}

/// Set up logging on stderr for the process (the binary calls this once, first thing).
/// A line that cannot be written is dropped: `log_internal_errors(false)` keeps tracing from
/// reporting it with `eprintln!`, which panics when stderr itself is the problem (a closed
/// pipe, a full disk).
pub fn init(v: &Verbosity) {
    QUIET.store(v.quiet, Ordering::Relaxed);
    let env = std::env::var("RUNNER_LOG")
        .or_else(|_| std::env::var("RUST_LOG"))
        .ok();
    let filter = EnvFilter::try_new(filter_directives(env.as_deref(), v))
        .unwrap_or_else(|_| EnvFilter::new(filter_directives(None, v)));
    let terminal = io::IsTerminal::is_terminal(&io::stderr());
    let color = terminal && std::env::var_os("NO_COLOR").is_none();
    let format_env = std::env::var("RUNNER_LOG_FORMAT").ok();
    let builder = tracing_subscriber::fmt()
        .with_writer(writer::LogWriter)
        .log_internal_errors(false)
        .with_env_filter(filter);
    let format = LogFormat::choose(format_env.as_deref(), terminal);
    FORMAT.store(format as u8, Ordering::Relaxed);
    // Another subscriber already set (tests embedding the library) is left in place.
    let _ = match format {
        LogFormat::Human => builder
            .event_format(human::HumanFormat { color })
            .try_init(),
        LogFormat::Full => builder.with_target(false).with_ansi(color).try_init(),
        LogFormat::Json => builder.json().with_target(true).try_init(),
    };
}

tokio::task_local! {
    static TASK_LOG: Arc<Mutex<Vec<u8>>>;
}

/// Write one log line: to the current task's buffer if it has one, else to stderr (around the
/// progress line, if one is shown).
pub fn write_log(bytes: &[u8]) -> io::Result<()> {
    let buffered = TASK_LOG.try_with(|b| {
        b.lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend_from_slice(bytes)
    });
    if buffered.is_ok() {
        return Ok(());
    }
    match STDERR_WRITER.get() {
        Some(write) => write(bytes),
        None => {
            let mut err = io::stderr().lock();
            err.write_all(bytes)?;
            err.flush()
        }
    }
}

/// A function that writes log bytes to stderr.
type StderrWriter = fn(&[u8]) -> io::Result<()>;

/// How log lines reach stderr when something else draws there (the progress line), set once.
static STDERR_WRITER: std::sync::OnceLock<StderrWriter> = std::sync::OnceLock::new();

/// Have every log line that goes to stderr written by `write` (the progress line's, which
/// clears and redraws the line around it). The first writer set stays.
pub fn set_stderr_writer(write: StderrWriter) {
    let _ = STDERR_WRITER.set(write);
}

/// Run `f` with its log lines collected in `buffer`.
pub async fn buffered<F: Future>(buffer: Arc<Mutex<Vec<u8>>>, f: F) -> F::Output {
    TASK_LOG.scope(buffer, f).await
}

/// `f` made to log where the calling task logs, for work it hands to another thread
/// (`spawn_blocking`): into the task's buffer when it has one (so a task's patch and commit
/// lines stay inside its `::group::`), else to stderr.
pub(crate) fn carried<R>(f: impl FnOnce() -> R) -> impl FnOnce() -> R {
    let buffer = TASK_LOG.try_with(Arc::clone).ok();
    move || match buffer {
        Some(b) => TASK_LOG.sync_scope(b, f),
        None => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn blocking_work_logs_into_the_tasks_buffer() {
        let buf = Arc::new(Mutex::new(Vec::new()));
        buffered(buf.clone(), async {
            let work = carried(|| write_log(b"from a blocking thread\n"));
            tokio::task::spawn_blocking(work).await.unwrap().unwrap();
        })
        .await;
        assert_eq!(&*buf.lock().unwrap(), b"from a blocking thread\n");
    }

    #[test]
    fn verbosity_and_env_make_the_filter() {
        let v = |verbose, quiet| Verbosity { verbose, quiet };
        let off = ",tokenize=off,parse=off,expansion=off,arithmetic=off";
        assert_eq!(
            filter_directives(None, &v(0, false)),
            format!("runner=info,warn{off}")
        );
        assert_eq!(
            filter_directives(None, &v(1, false)),
            format!("runner=debug,info{off}")
        );
        assert_eq!(filter_directives(None, &v(0, true)), format!("warn{off}"));
        assert_eq!(
            filter_directives(Some("debug"), &v(0, true)),
            format!("debug{off}")
        );
        assert_eq!(
            filter_directives(Some("debug,tokenize=debug"), &v(0, false)),
            "debug,tokenize=debug,parse=off,expansion=off,arithmetic=off"
        );
    }

    #[test]
    fn format_by_terminal_and_env() {
        assert_eq!(LogFormat::choose(None, true), LogFormat::Human);
        assert_eq!(LogFormat::choose(None, false), LogFormat::Full);
        assert_eq!(LogFormat::choose(Some("json"), true), LogFormat::Json);
        assert_eq!(LogFormat::choose(Some("human"), false), LogFormat::Human);
    }
}
