//! JUnit XML (`--junit FILE`) in the shape CI consumers read (the attributes pytest, jest and
//! cargo-nextest write), valid against Jenkins' `junit-10.xsd`.
//!
//! One `<testsuite>` per task holding one `<testcase name="agent">`; the outcome decides the
//! child element ([`Outcome::junit`](crate::outcome::Outcome::junit)), whose `type` is
//! always the `runner_outcome`. All text is stripped of ANSI escapes and XML-invalid characters
//! and escaped by quick-xml. Redaction is the caller's job: pass results through
//! [`RunResult::redacted`](crate::events::RunResult::redacted) first.

use std::io::{self, Write};
use std::path::Path;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesText, Event};

use crate::events::{CheckResult, RunResult};
use crate::outcome::JunitKind;
use crate::report::json::error_texts;
use crate::report::xml_text::{sanitize, truncate};

/// Cap on the text of `<failure>`/`<error>` and `<system-out>` (bytes).
pub(crate) const MAX_TEXT_BYTES: usize = 64 * 1024;
/// Cap on `message` attributes (bytes).
pub(crate) const MAX_MESSAGE_BYTES: usize = 1024;

/// Render the JUnit document for `results` (already redacted).
pub fn render_junit(results: &[RunResult], hostname: &str) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    if let Err(e) = write_document(&mut w, results, hostname) {
        // Writing into a Vec cannot fail; keep the signature infallible but never silent.
        tracing::error!(error = %e, "rendering JUnit XML failed");
    }
    let mut buf = w.into_inner();
    buf.push(b'\n');
    String::from_utf8(buf).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Write the JUnit document for `results` to `path` atomically (temp file + rename), creating
/// parent directories. The hostname comes from the system, `localhost` if unknown.
pub fn write_junit(path: &Path, results: &[RunResult]) -> io::Result<()> {
    let xml = render_junit(results, &hostname());
    crate::atomic_file::write(path, xml.as_bytes())
}

/// This machine's hostname, `localhost` when it cannot be determined.
pub fn hostname() -> String {
    gethostname::gethostname()
        .into_string()
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

#[derive(Default)]
struct Counts {
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    millis: u64,
}

impl Counts {
    fn add(&mut self, r: &RunResult) {
        self.tests += 1;
        self.millis += r.duration_ms;
        match r.outcome.junit() {
            JunitKind::Pass => {}
            JunitKind::Failure => self.failures += 1,
            JunitKind::Error => self.errors += 1,
            JunitKind::Skipped => self.skipped += 1,
        }
        self.tests += r.checks.len();
        self.failures += r.checks.iter().filter(|c| !c.passed).count();
    }
}

fn seconds(millis: u64) -> String {
    format!("{}.{:03}", millis / 1000, millis % 1000)
}

fn write_document<W: Write>(
    w: &mut Writer<W>,
    results: &[RunResult],
    hostname: &str,
) -> io::Result<()> {
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let mut total = Counts::default();
    results.iter().for_each(|r| total.add(r));
    // No `skipped` here: junit-10.xsd does not allow it on <testsuites>.
    w.create_element("testsuites")
        .with_attribute(("name", "runner"))
        .with_attribute(("tests", total.tests.to_string().as_str()))
        .with_attribute(("failures", total.failures.to_string().as_str()))
        .with_attribute(("errors", total.errors.to_string().as_str()))
        .with_attribute(("time", seconds(total.millis).as_str()))
        .write_inner_content(|w| {
            for r in results {
                write_suite(w, r, hostname)?;
            }
            Ok(())
        })?;
    Ok(())
}

/// `YYYY-MM-DDTHH:MM:SS` (no zone), as the Ant schema requires.
fn is_junit_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 19
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 => *c == b'-',
            10 => *c == b'T',
            13 | 16 => *c == b':',
            _ => c.is_ascii_digit(),
        })
}

fn write_suite<W: Write>(w: &mut Writer<W>, r: &RunResult, hostname: &str) -> io::Result<()> {
    let mut c = Counts::default();
    c.add(r);
    let name = sanitize(&r.task_name);
    let time = seconds(r.duration_ms);
    let mut suite = w
        .create_element("testsuite")
        .with_attribute(("name", name.as_str()))
        .with_attribute(("tests", c.tests.to_string().as_str()))
        .with_attribute(("failures", c.failures.to_string().as_str()))
        .with_attribute(("errors", c.errors.to_string().as_str()))
        .with_attribute(("skipped", c.skipped.to_string().as_str()))
        .with_attribute(("time", time.as_str()));
    if is_junit_timestamp(&r.started_at) {
        suite = suite.with_attribute(("timestamp", r.started_at.as_str()));
    } else {
        tracing::warn!(started_at = %r.started_at, "run start time is not YYYY-MM-DDTHH:MM:SS; JUnit timestamp omitted");
    }
    let host = sanitize(hostname);
    suite
        .with_attribute(("hostname", host.as_str()))
        .write_inner_content(|w| {
            write_properties(w, r)?;
            write_case(w, r, &name, &time)?;
            for check in &r.checks {
                write_check(w, check, &name)?;
            }
            Ok(())
        })?;
    Ok(())
}

fn write_properties<W: Write>(w: &mut Writer<W>, r: &RunResult) -> io::Result<()> {
    let transcript = r
        .transcript_path
        .as_ref()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let props: [(&str, String); 12] = [
        ("model", r.model.clone()),
        ("turns", r.num_turns.to_string()),
        ("input_tokens", r.usage.input_tokens.to_string()),
        ("output_tokens", r.usage.output_tokens.to_string()),
        (
            "cache_read_tokens",
            r.usage.cache_read_input_tokens.to_string(),
        ),
        (
            "cache_write_tokens",
            r.usage.cache_creation_input_tokens.to_string(),
        ),
        (
            "cost_usd",
            r.total_cost_usd
                .map_or_else(|| "unknown".to_string(), |c| format!("{c:.6}")),
        ),
        ("runner_outcome", r.outcome.name().to_string()),
        ("transcript", transcript),
        ("denials", r.permission_denials.len().to_string()),
        ("exit_code", r.outcome.exit_code().to_string()),
        ("session_id", r.session_id.clone()),
    ];
    // One property per denied call, so dashboards show what the agent was refused.
    let denials: Vec<(String, String)> = r
        .permission_denials
        .iter()
        .enumerate()
        .map(|(i, d)| {
            (
                format!("denial.{}", i + 1),
                truncate(
                    &format!("{} ({}): {}", d.tool_name, d.tool_use_id, d.reason),
                    1024,
                ),
            )
        })
        .collect();
    let git = git_properties(r);
    let sandbox = sandbox_properties(r);
    let timing = crate::report::timing::properties(r);
    let rate_limit = crate::report::rate_limit::properties(r);
    w.create_element("properties").write_inner_content(|w| {
        let all = props
            .iter()
            .map(|(n, v)| (*n, v.as_str()))
            .chain(denials.iter().map(|(n, v)| (n.as_str(), v.as_str())))
            .chain(git.iter().map(|(n, v)| (*n, v.as_str())))
            .chain(sandbox.iter().map(|(n, v)| (*n, v.as_str())))
            .chain(timing.iter().map(|(n, v)| (*n, v.as_str())))
            .chain(rate_limit.iter().map(|(n, v)| (*n, v.as_str())));
        for (name, value) in all {
            let value = sanitize(value);
            w.create_element("property")
                .with_attribute(("name", name))
                .with_attribute(("value", value.as_str()))
                .write_empty()?;
        }
        Ok(())
    })?;
    Ok(())
}

/// `sandbox.*` properties: how the task's commands were confined, and what the egress proxy
/// let through and refused.
fn sandbox_properties(r: &RunResult) -> Vec<(&'static str, String)> {
    let Some(s) = &r.sandbox else {
        return Vec::new();
    };
    let mut out = vec![
        ("sandbox.mode", s.mode.clone()),
        ("sandbox.confined", s.confined.to_string()),
        (
            "sandbox.landlock_abi",
            s.landlock_abi
                .map_or_else(|| "none".into(), |v| v.to_string()),
        ),
        ("sandbox.network", s.network.clone()),
        (
            "sandbox.writable",
            s.writable
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
        ),
        ("network.allowed", r.network.allowed.to_string()),
        ("network.denied", r.network.denied.to_string()),
    ];
    if let Some(why) = &s.unconfined_because {
        out.push(("sandbox.unconfined_because", why.clone()));
    }
    out
}

/// `git.*` properties: whether the task changed anything, its patch, branch commit and kept
/// worktree.
fn git_properties(r: &RunResult) -> Vec<(&'static str, String)> {
    let Some(g) = &r.git else {
        return Vec::new();
    };
    let mut out = vec![
        ("git.changed", g.changed.to_string()),
        ("git.files_changed", g.files_changed.to_string()),
        ("git.base_commit", g.base_commit.clone()),
    ];
    let paths = [("git.patch", &g.patch), ("git.worktree", &g.worktree)];
    for (name, p) in paths {
        if let Some(p) = p {
            out.push((name, p.display().to_string()));
        }
    }
    for (name, v) in [("git.branch", &g.branch), ("git.commit", &g.commit)] {
        if let Some(v) = v {
            out.push((name, v.clone()));
        }
    }
    out
}

fn write_case<W: Write>(
    w: &mut Writer<W>,
    r: &RunResult,
    name: &str,
    time: &str,
) -> io::Result<()> {
    let file = sanitize(&r.spec_path.display().to_string());
    let line = r.spec_line.max(1).to_string();
    w.create_element("testcase")
        .with_attribute(("classname", name))
        .with_attribute(("name", "agent"))
        .with_attribute(("time", time))
        .with_attribute(("file", file.as_str()))
        .with_attribute(("line", line.as_str()))
        .write_inner_content(|w| {
            let kind = r.outcome.junit();
            let element = match kind {
                JunitKind::Pass => None,
                JunitKind::Failure => Some("failure"),
                JunitKind::Error => Some("error"),
                JunitKind::Skipped => Some("skipped"),
            };
            if let Some(element) = element {
                let message = truncate(&sanitize(&r.outcome.message), MAX_MESSAGE_BYTES);
                let el = w
                    .create_element(element)
                    .with_attribute(("type", r.outcome.name()))
                    .with_attribute(("message", message.as_str()));
                if kind == JunitKind::Skipped {
                    el.write_empty()?;
                } else {
                    let detail = truncate(&sanitize(&failure_detail(r)), MAX_TEXT_BYTES);
                    el.write_text_content(BytesText::new(&detail))?;
                }
            }
            let out = truncate(&sanitize(&system_out(r)), MAX_TEXT_BYTES);
            w.create_element("system-out")
                .write_text_content(BytesText::new(&out))?;
            Ok(())
        })?;
    Ok(())
}

/// One verify check as its own testcase (`classname` = task, `name` = check).
fn write_check<W: Write>(w: &mut Writer<W>, c: &CheckResult, task: &str) -> io::Result<()> {
    let name = sanitize(&c.name);
    let time = seconds(c.duration_ms);
    let output = truncate(&sanitize(&c.output), MAX_TEXT_BYTES);
    w.create_element("testcase")
        .with_attribute(("classname", task))
        .with_attribute(("name", name.as_str()))
        .with_attribute(("time", time.as_str()))
        .write_inner_content(|w| {
            if !c.passed {
                let message = match (c.timed_out, c.exit_code) {
                    (true, _) => "check timed out".to_string(),
                    (false, Some(code)) => format!("check exited {code}"),
                    (false, None) => "check did not run".to_string(),
                };
                let message = if c.report_only {
                    format!("{message} (report only: the agent hit a limit)")
                } else {
                    message
                };
                w.create_element("failure")
                    .with_attribute(("type", "check_failed"))
                    .with_attribute(("message", message.as_str()))
                    .write_text_content(BytesText::new(&output))?;
            } else {
                w.create_element("system-out")
                    .write_text_content(BytesText::new(&output))?;
            }
            Ok(())
        })?;
    Ok(())
}

fn failure_detail(r: &RunResult) -> String {
    let mut s = error_texts(r).join("\n");
    if !r.result_text.is_empty() {
        s.push_str("\n\nFinal message:\n");
        s.push_str(&r.result_text);
    }
    s
}

fn system_out(r: &RunResult) -> String {
    let mut s = String::new();
    if !r.result_text.is_empty() {
        s.push_str(&r.result_text);
        s.push_str("\n\n");
    }
    if let Some(p) = &r.transcript_path {
        s.push_str(&format!("Transcript: {}\n", p.display()));
    }
    s
}
