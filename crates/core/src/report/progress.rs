//! Progress of a batch on stderr. On a terminal (and outside GitHub Actions, without `-q`)
//! with several tasks: an `indicatif` progress line at the bottom of stderr — tasks
//! done/running/passed/failed/skipped, tokens and cost (tokens and cost grow with each model
//! response, see [`ProgressSink`]). Log lines and stdout output are written with the line
//! suspended ([`write_around`], [`suspend`]), so they never garble it or each other, and each
//! finished task leaves one log line above it. Elsewhere: the plain one-line-per-event logs
//! (`task started`, `task finished`, `skipped`) and nothing else.

use std::io::{self, IsTerminal, Write};
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::events::{RunEvent, RunResult, Sink};
use crate::model::Usage;
use crate::model::table::ModelInfo;
use crate::outcome::OutcomeKind;
use crate::report::money;

/// The live progress line, when one is shown.
static STATUS: Mutex<Option<Progress>> = Mutex::new(None);

/// The progress line and its counters.
struct Progress {
    bar: ProgressBar,
    status: Status,
}

/// Counters of the status line.
#[derive(Debug, Default, Clone)]
struct Status {
    total: usize,
    running: usize,
    passed: usize,
    failed: usize,
    skipped: usize,
    tokens: u64,
    cost_usd: f64,
    cost_unknown: bool,
}

impl Status {
    /// The counters after the bar: `1 running · 2 passed · … · $0.0123`.
    fn counters(&self) -> String {
        let cost = if self.cost_unknown {
            format!("{}+ (some costs unknown)", money::usd(self.cost_usd))
        } else {
            money::usd(self.cost_usd)
        };
        format!(
            "{} running · {} passed · {} failed · {} skipped · {} tokens · {cost}",
            self.running, self.passed, self.failed, self.skipped, self.tokens
        )
    }

    fn done(&self) -> usize {
        self.passed + self.failed + self.skipped
    }

    /// The whole status as one line (the last state, left on stderr at the end).
    fn line(&self) -> String {
        format!(
            "runner: {}/{} done · {}",
            self.done(),
            self.total,
            self.counters()
        )
    }
}

/// Whether a live status line should be shown: stderr is a terminal, not in GitHub Actions,
/// not `quiet` (`-q`), and `RUNNER_PROGRESS` is not `0`.
pub fn wanted(quiet: bool) -> bool {
    io::stderr().is_terminal()
        && !quiet
        && std::env::var("GITHUB_ACTIONS").as_deref() != Ok("true")
        && std::env::var("RUNNER_PROGRESS").as_deref() != Ok("0")
}

/// Start showing the status line for `total` tasks.
pub fn start(total: usize) {
    crate::log::set_stderr_writer(write_around);
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{spinner:.cyan} runner [{elapsed}] {bar:20.cyan/blue} {pos}/{len} done · {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    let status = Status {
        total,
        ..Default::default()
    };
    bar.set_message(status.counters());
    bar.enable_steady_tick(Duration::from_millis(120));
    *lock() = Some(Progress { bar, status });
}

fn lock() -> std::sync::MutexGuard<'static, Option<Progress>> {
    STATUS.lock().unwrap_or_else(|e| e.into_inner())
}

/// A task started.
pub fn task_started() {
    update(|s| s.running += 1);
}

/// A task finished (or was skipped without starting, `started == false`).
pub fn task_finished(r: &RunResult, started: bool) {
    update(|s| {
        if started {
            s.running = s.running.saturating_sub(1);
        }
        match r.outcome.kind {
            OutcomeKind::Success => s.passed += 1,
            OutcomeKind::Skipped | OutcomeKind::NotStarted => s.skipped += 1,
            _ => s.failed += 1,
        }
    });
}

/// Whether a status line is being shown.
pub(crate) fn active() -> bool {
    lock().is_some()
}

fn total_tokens(u: &Usage) -> u64 {
    u.total()
}

/// Feeds one task's tokens and cost to the status line as responses complete; on the task's
/// result, replaces its running figures with the final ones.
pub(crate) struct ProgressSink {
    info: Option<ModelInfo>,
    tokens: u64,
    cost_usd: f64,
}

impl ProgressSink {
    /// A sink for a task whose model is `info` (for prices).
    pub(crate) fn new(info: Option<ModelInfo>) -> ProgressSink {
        ProgressSink {
            info,
            tokens: 0,
            cost_usd: 0.0,
        }
    }
}

impl Sink for ProgressSink {
    fn emit(&mut self, event: &RunEvent) -> io::Result<()> {
        match event {
            RunEvent::AssistantResponse { meta, .. } => {
                let t = total_tokens(&meta.usage);
                let c = self.info.and_then(|i| i.cost_usd(&meta.usage));
                self.tokens = self.tokens.saturating_add(t);
                self.cost_usd += c.unwrap_or(0.0);
                update(|s| {
                    s.tokens = s.tokens.saturating_add(t);
                    match c {
                        Some(c) => s.cost_usd += c,
                        None => s.cost_unknown = true,
                    }
                });
            }
            RunEvent::Result(r) => {
                let (t, c) = (self.tokens, self.cost_usd);
                update(|s| {
                    s.tokens = s
                        .tokens
                        .saturating_sub(t)
                        .saturating_add(total_tokens(&r.usage));
                    s.cost_usd = (s.cost_usd - c).max(0.0) + r.total_cost_usd.unwrap_or(0.0);
                    if r.total_cost_usd.is_none() && r.num_turns > 0 {
                        s.cost_unknown = true;
                    }
                });
                self.tokens = 0;
                self.cost_usd = 0.0;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Stop showing the status line; its last state stays on stderr as one line.
pub fn finish() {
    finish_into(&mut io::stderr().lock());
}

/// [`finish`], with the last state written to `out`.
fn finish_into(out: &mut impl Write) {
    let Some(p) = lock().take() else {
        return;
    };
    p.bar.finish_and_clear();
    let _ = writeln!(out, "{}", p.status.line());
    let _ = out.flush();
}

fn update(f: impl FnOnce(&mut Status)) {
    let mut guard = lock();
    if let Some(p) = guard.as_mut() {
        f(&mut p.status);
        p.bar.set_position(p.status.done() as u64);
        p.bar.set_message(p.status.counters());
    }
}

/// The progress bar, when one is shown (a handle: the lock is not held while it draws).
fn bar() -> Option<ProgressBar> {
    lock().as_ref().map(|p| p.bar.clone())
}

/// Run `f` (which writes to the terminal) with the status line cleared, and redraw it after.
pub(crate) fn suspend<R>(f: impl FnOnce() -> R) -> R {
    match bar() {
        Some(b) => b.suspend(f),
        None => f(),
    }
}

/// Write log `bytes` to stderr; with a status line shown, clear it first and redraw it after.
pub(crate) fn write_around(bytes: &[u8]) -> io::Result<()> {
    suspend(|| {
        let mut err = io::stderr().lock();
        err.write_all(bytes)?;
        err.flush()
    })
}

/// stdout for the chosen output format: each write is made with the status line suspended when
/// stdout shares the terminal with it, so answers and the line never garble each other.
pub struct Stdout {
    terminal: bool,
}

impl Stdout {
    /// The process's stdout.
    pub fn new() -> Stdout {
        Stdout {
            terminal: io::stdout().is_terminal(),
        }
    }
}

impl Default for Stdout {
    fn default() -> Stdout {
        Stdout::new()
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.terminal {
            suspend(|| {
                let mut out = io::stdout().lock();
                out.write_all(buf)?;
                out.flush()?;
                Ok(buf.len())
            })
        } else {
            io::stdout().write(buf)
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_line_counts() {
        let s = Status {
            total: 5,
            running: 1,
            passed: 2,
            failed: 1,
            skipped: 1,
            tokens: 1234,
            cost_usd: 0.5,
            cost_unknown: false,
        };
        assert_eq!(
            s.line(),
            "runner: 4/5 done · 1 running · 2 passed · 1 failed · 1 skipped · 1234 tokens · $0.5000"
        );
        let u = Status {
            cost_unknown: true,
            ..s
        };
        assert!(u.line().ends_with("$0.5000+ (some costs unknown)"));
    }

    #[test]
    fn sink_adds_tokens_and_cost_per_response() {
        // The only test that touches the process-wide status.
        start(1);
        task_started();
        let info = crate::model::table::builtin("claude-sonnet-4-5");
        let mut sink = ProgressSink::new(info);
        let meta = crate::events::AssistantMeta {
            message_id: "m".into(),
            model: "claude-sonnet-4-5".into(),
            request_id: None,
            usage: Usage {
                input_tokens: 1_000_000,
                output_tokens: 0,
                cache_creation_input_tokens: 0,
                cache_read_input_tokens: 0,
            },
            stop_reason: None,
            stop_sequence: None,
        };
        let event = RunEvent::AssistantResponse {
            meta,
            blocks: vec![],
        };
        sink.emit(&event).unwrap();
        sink.emit(&event).unwrap();
        let line = lock().as_ref().unwrap().status.line();
        assert!(line.contains("1 running"), "{line}");
        assert!(line.contains("2000000 tokens · $6.0000"), "{line}");
        let mut last = Vec::new();
        finish_into(&mut last);
        assert!(!active());
        assert_eq!(String::from_utf8(last).unwrap(), format!("{line}\n"));
    }
}
