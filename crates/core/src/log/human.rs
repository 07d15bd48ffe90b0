//! The log format for a person at a terminal: no timestamps, no targets, `warning:` and
//! `error:` prefixes as compilers print them, one line per tool call with its status and
//! duration (`  ✓ Bash  cargo test --quiet  (12.4 s)`), denials in red with the reason, and one
//! line per finished task. Elsewhere (stderr not a terminal) the full structured format is
//! used, and `RUNNER_LOG_FORMAT=json` gives JSON lines.

use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The target of the one-line-per-tool-call events (see `report::tool_log`).
pub(crate) const TOOL_TARGET: &str = "runner::tool_call";

/// Whether tool-call lines name their task (several tasks run at once).
static SHOW_TASK: AtomicBool = AtomicBool::new(false);

/// Name the task on each tool-call line (set when several tasks run at once).
pub fn show_task(yes: bool) {
    SHOW_TASK.store(yes, Ordering::Relaxed);
}

const RESET: &str = "\x1b[0m";
const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const YELLOW: &str = "\x1b[33m";
const BOLD_RED: &str = "\x1b[1;31m";
const BOLD_YELLOW: &str = "\x1b[1;33m";
const DIM: &str = "\x1b[2m";

/// The human log format (see the module docs). `color`: ANSI colours.
#[derive(Debug, Clone, Copy)]
pub struct HumanFormat {
    /// Colour the output.
    pub color: bool,
}

impl<S, N> FormatEvent<S, N> for HumanFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        _ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let mut fields = Fields::default();
        event.record(&mut fields);
        let meta = event.metadata();
        let line = render(*meta.level(), meta.target(), &fields, self.color);
        writeln!(writer, "{line}")
    }
}

/// An event's fields as text: the message and the rest in order.
#[derive(Debug, Default)]
struct Fields {
    message: String,
    rest: Vec<(&'static str, String)>,
}

impl Fields {
    fn get(&self, name: &str) -> Option<&str> {
        self.rest
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.set(field, value.to_string());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.set(field, value.to_string());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.set(field, value.to_string());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.set(field, value.to_string());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.set(field, value.to_string());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        // `%value` fields and the message arrive here already formatted with Display.
        self.set(field, format!("{value:?}"));
    }
}

impl Fields {
    fn set(&mut self, field: &Field, value: String) {
        if field.name() == "message" {
            self.message = value;
        } else {
            self.rest.push((field.name(), value));
        }
    }
}

/// Paint `text` with `style` when colouring.
fn paint(color: bool, style: &str, text: &str) -> String {
    if color {
        format!("{style}{text}{RESET}")
    } else {
        text.to_string()
    }
}

/// A duration in milliseconds as people read it: `340 ms`, `12.4 s`.
fn duration(ms: &str) -> String {
    match ms.parse::<u64>() {
        Ok(ms) if ms < 1000 => format!("{ms} ms"),
        Ok(ms) => format!("{:.1} s", ms as f64 / 1000.0),
        Err(_) => ms.to_string(),
    }
}

/// One event as a line (without its newline).
fn render(level: Level, target: &str, f: &Fields, color: bool) -> String {
    if target == TOOL_TARGET {
        return tool_line(f, color);
    }
    match f.message.as_str() {
        "task finished" if f.get("task").is_some() => return task_line(f, color),
        "task started" if f.get("task").is_some() => {
            let mut s = format!(
                "{} {}",
                paint(color, DIM, "▶"),
                f.get("task").unwrap_or_default()
            );
            if let Some(m) = f.get("model") {
                s.push_str(&paint(color, DIM, &format!("  {m}")));
            }
            return s;
        }
        _ => {}
    }
    let mut s = match level {
        Level::ERROR => paint(color, BOLD_RED, "error: "),
        Level::WARN => paint(color, BOLD_YELLOW, "warning: "),
        Level::INFO => String::new(),
        Level::DEBUG => paint(color, DIM, "debug: "),
        Level::TRACE => paint(color, DIM, "trace: "),
    };
    s.push_str(&f.message);
    if !f.rest.is_empty() {
        let mut kv = String::new();
        for (k, v) in &f.rest {
            let _ = write!(kv, " {k}={v}");
        }
        if f.message.is_empty() {
            kv.remove(0);
        }
        s.push_str(&paint(color, DIM, &kv));
    }
    s
}

/// `  ✓ Bash  cargo test --quiet  (12.4 s)`; a failed call with `✗`; a denied one in red with
/// its reason.
fn tool_line(f: &Fields, color: bool) -> String {
    let tool = f.get("tool").unwrap_or("?");
    let input = f.get("input").unwrap_or_default();
    let task = f
        .get("task")
        .filter(|_| SHOW_TASK.load(Ordering::Relaxed))
        .map(|t| paint(color, DIM, &format!("[{t}] ")))
        .unwrap_or_default();
    let mut s = format!("  {task}");
    match f.get("status") {
        Some("denied") => {
            let reason = f.get("reason").unwrap_or("denied");
            let text = format!("✗ {tool}  {input}  denied: {reason}");
            s.push_str(&paint(color, RED, text.trim_end()));
            return s;
        }
        Some("error") => s.push_str(&paint(color, RED, "✗")),
        _ => s.push_str(&paint(color, GREEN, "✓")),
    }
    s.push(' ');
    s.push_str(tool);
    if !input.is_empty() {
        s.push_str("  ");
        s.push_str(input);
    }
    if let Some(ms) = f.get("duration_ms") {
        s.push_str(&paint(color, DIM, &format!("  ({})", duration(ms))));
    }
    // Why a call failed.
    if f.get("status") == Some("error")
        && let Some(reason) = f.get("reason")
    {
        s.push_str(&paint(color, RED, &format!(": {reason}")));
    }
    s
}

/// `✓ fix-tests: success · 4 turns · 12.3 s · $0.0280`, with the reason when it failed.
fn task_line(f: &Fields, color: bool) -> String {
    let task = f.get("task").unwrap_or_default();
    let outcome = f.get("outcome").unwrap_or("?");
    let (icon, style) = match outcome {
        "success" => ("✓", GREEN),
        "skipped" | "not_started" => ("○", DIM),
        "denied" => ("✗", YELLOW),
        _ => ("✗", RED),
    };
    let mut s = format!(
        "{} {task}: {}",
        paint(color, style, icon),
        paint(color, style, outcome)
    );
    let mut facts = Vec::new();
    if let Some(t) = f.get("turns") {
        facts.push(format!("{t} turn{}", if t == "1" { "" } else { "s" }));
    }
    if let Some(ms) = f.get("duration_ms") {
        facts.push(duration(ms));
    }
    if let Some(c) = f.get("cost") {
        facts.push(c.to_string());
    }
    if !facts.is_empty() {
        s.push_str(&paint(color, DIM, &format!(" · {}", facts.join(" · "))));
    }
    if let Some(r) = f.get("reason") {
        s.push_str(&format!(" — {r}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// The lines the human format writes for the events `f` logs.
    fn capture(color: bool, f: impl FnOnce()) -> String {
        let buf = Arc::new(Mutex::new(Vec::<u8>::new()));
        let sink = buf.clone();
        let subscriber = tracing_subscriber::fmt()
            .event_format(HumanFormat { color })
            .with_max_level(Level::TRACE)
            .with_writer(move || Capture(sink.clone()))
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let bytes = buf.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    struct Capture(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Capture {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn sample() {
        tracing::info!(
            task = "fix-tests",
            model = "claude-sonnet-4-5",
            "task started"
        );
        tracing::info!(target: TOOL_TARGET, task = "fix-tests", tool = "Bash", input = "cargo test --quiet", status = "ok", duration_ms = 12_400u64, "tool call");
        tracing::info!(target: TOOL_TARGET, task = "fix-tests", tool = "Read", input = "src/lib.rs", status = "ok", duration_ms = 3u64, "tool call");
        tracing::info!(target: TOOL_TARGET, task = "fix-tests", tool = "Bash", input = "cargo build", status = "error", reason = "exit code 101: error[E0425]", duration_ms = 2_050u64, "tool call");
        tracing::warn!(target: TOOL_TARGET, task = "fix-tests", tool = "Bash", input = "rm -rf target", status = "denied", reason = "no allow rule matches Bash(rm -rf target)", "tool call");
        tracing::warn!(check = "tests", exit_code = 1, "verify check failed");
        tracing::error!("cannot write the JUnit report junit.xml: No space left on device");
        tracing::debug!(spec = "tasks/a.yaml", "spec loaded");
        tracing::info!(
            task = "fix-tests",
            outcome = "checks_failed",
            turns = 4u32,
            duration_ms = 12_345u64,
            cost = "$0.0280",
            reason = "check `tests` failed",
            "task finished"
        );
        tracing::info!(
            task = "docs",
            outcome = "success",
            turns = 1u32,
            duration_ms = 800u64,
            cost = "$0.0010",
            "task finished"
        );
    }

    #[test]
    fn human_format() {
        insta::assert_snapshot!(capture(false, sample));
    }

    #[test]
    fn human_format_in_colour() {
        let out = capture(true, sample);
        assert!(out.contains(&format!(
            "{RED}✗ Bash  rm -rf target  denied: no allow rule"
        )));
        assert!(out.contains(&format!("  {GREEN}✓{RESET} Bash  cargo test --quiet")));
        assert!(out.contains(&format!("{BOLD_YELLOW}warning: {RESET}verify check failed")));
    }

    #[test]
    fn strings_print_bare_without_timestamps() {
        let out = capture(false, || tracing::info!(outcome = "success", "x"));
        assert_eq!(out, "x outcome=success\n");
    }
}
