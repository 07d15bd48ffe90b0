//! GitHub Actions integration: step summary, annotations, step outputs, secret masks.
//!
//! Workflow commands go to stderr (the runner reads them there too), because stdout belongs to
//! the chosen output format. Text that came from the model or a tool never reaches the command
//! channel unescaped: the whole run is wrapped in `::stop-commands::TOKEN`, annotation data is
//! escaped, and `$GITHUB_OUTPUT` values use random heredoc delimiters.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::events::RunResult;
use crate::report::xml_text::truncate;

/// What runner writes at most into the step summary: GitHub's limit is 1 MiB for one step,
/// and this leaves room for other steps' output.
const SUMMARY_BUDGET: usize = 900 * 1024;
/// Most failure detail shown per task in the summary.
const DETAIL_BYTES: usize = 16 * 1024;

/// The Actions environment, when running inside GitHub Actions.
#[derive(Debug, Clone)]
pub struct GithubEnv {
    /// `$GITHUB_STEP_SUMMARY`.
    pub step_summary: Option<PathBuf>,
    /// `$GITHUB_OUTPUT`.
    pub output: Option<PathBuf>,
}

impl GithubEnv {
    /// Detect Actions (`GITHUB_ACTIONS=true`).
    pub fn detect() -> Option<GithubEnv> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Detect from an arbitrary variable lookup (tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Option<GithubEnv> {
        if get("GITHUB_ACTIONS").as_deref() != Some("true") {
            return None;
        }
        let path = |k: &str| get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Some(GithubEnv {
            step_summary: path("GITHUB_STEP_SUMMARY"),
            output: path("GITHUB_OUTPUT"),
        })
    }
}

/// A random token for `::stop-commands::` and heredoc delimiters.
pub(crate) fn random_token() -> String {
    format!("runner-{}", uuid::Uuid::new_v4().simple())
}

/// Escape workflow-command message data.
pub(crate) fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escape workflow-command property values.
pub(crate) fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

fn stderr_line(line: &str) {
    let mut e = std::io::stderr().lock();
    let _ = writeln!(e, "{line}");
    let _ = e.flush();
}

/// `::add-mask::` for each secret value (so GitHub hides them in every log line).
pub(crate) fn mask_values(values: &[String]) {
    for v in values.iter().filter(|v| !v.is_empty()) {
        for line in v.lines().filter(|l| !l.trim().is_empty()) {
            stderr_line(&format!("::add-mask::{}", escape_data(line)));
        }
    }
}

/// Stop command processing until [`resume_commands`] with the same token.
pub(crate) fn stop_commands(token: &str) {
    stderr_line(&format!("::stop-commands::{token}"));
}

/// Resume command processing.
pub(crate) fn resume_commands(token: &str) {
    stderr_line(&format!("::{token}::"));
}

/// The annotation line for a task that did not succeed (None for success/skipped).
pub fn annotation(r: &RunResult) -> Option<String> {
    use crate::outcome::OutcomeKind::*;
    let level = match r.outcome.kind {
        Success | Skipped => return None,
        Denied => "warning",
        _ => "error",
    };
    let title = format!("runner: {} ({})", r.task_name, r.outcome.name());
    let mut msg = r.outcome.message.clone();
    for c in r.checks.iter().filter(|c| !c.passed) {
        msg.push_str(&format!("\ncheck `{}` failed", c.name));
    }
    Some(format!(
        "::{level} file={},line={},title={}::{}",
        escape_property(&r.spec_path.display().to_string()),
        r.spec_line.max(1),
        escape_property(&title),
        escape_data(&truncate(&msg, 4096))
    ))
}

/// Print annotations for every task that did not succeed.
pub(crate) fn annotate(results: &[RunResult]) {
    for line in results.iter().filter_map(annotation) {
        stderr_line(&line);
    }
}

fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn fence(text: &str) -> String {
    // A fence longer than any backtick run inside, so the text cannot close it.
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let f = "`".repeat(longest.max(2) + 1);
    format!("{f}text\n{text}\n{f}\n")
}

/// How the tasks' commands were confined: a warning per task that ran unconfined, else one
/// line, and what the egress proxy let through and refused.
fn sandbox_lines(results: &[RunResult]) -> String {
    let mut s = String::from("\n");
    let mut confined = Vec::new();
    for r in results {
        let Some(sb) = &r.sandbox else { continue };
        if sb.confined {
            confined.push(r);
        } else {
            s.push_str(&format!(
                "> ⚠️ **{}**: commands ran **unconfined** ({})\n",
                md_cell(&r.task_name),
                md_cell(sb.unconfined_because.as_deref().unwrap_or("sandbox off"))
            ));
        }
    }
    if let Some(first) = confined.first().and_then(|r| r.sandbox.as_ref()) {
        let abi = first
            .landlock_abi
            .map_or_else(String::new, |v| format!(", Landlock ABI {v}"));
        s.push_str(&format!(
            "Sandbox: {} of {} task(s) confined{abi}; network {}.",
            confined.len(),
            results.len(),
            md_cell(&first.network)
        ));
        let (allowed, denied) = confined.iter().fold((0u64, 0u64), |(a, d), r| {
            (
                a + u64::from(r.network.allowed),
                d + u64::from(r.network.denied),
            )
        });
        if allowed + denied > 0 {
            s.push_str(&format!(
                " Egress proxy: {allowed} connection(s) allowed, {denied} refused."
            ));
        }
        s.push('\n');
    }
    if s.len() == 1 { String::new() } else { s }
}

/// The Markdown step summary for a run.
pub(crate) fn summary_markdown(results: &[RunResult]) -> String {
    let mut s = String::from(
        "## runner\n\n| task | outcome | turns | tokens (in/out) | cost | duration | checks |\n|---|---|---|---|---|---|---|\n",
    );
    for r in results {
        let icon = if r.outcome.is_error() { "❌" } else { "✅" };
        let cost = r
            .total_cost_usd
            .map_or("unknown".to_string(), |c| format!("${c:.4}"));
        let passed = r.checks.iter().filter(|c| c.passed).count();
        let checks = if r.checks.is_empty() {
            "—".to_string()
        } else {
            format!("{passed}/{}", r.checks.len())
        };
        s.push_str(&format!(
            "| {} | {icon} {} | {} | {}/{} | {cost} | {:.1}s | {checks} |\n",
            md_cell(&r.task_name),
            r.outcome.name(),
            r.num_turns,
            r.usage.input_tokens
                + r.usage.cache_creation_input_tokens
                + r.usage.cache_read_input_tokens,
            r.usage.output_tokens,
            r.duration_ms as f64 / 1000.0,
        ));
    }
    s.push_str(&sandbox_lines(results));
    for r in results.iter().filter(|r| r.outcome.is_error()) {
        if s.len() > SUMMARY_BUDGET {
            s.push_str(
                "\n_(more failures omitted: the summary is kept under GitHub's 1 MiB limit)_\n",
            );
            break;
        }
        let mut detail = format!("{}\n", r.outcome.message);
        for c in r.checks.iter().filter(|c| !c.passed) {
            detail.push_str(&format!(
                "\ncheck `{}` ({}):\n{}\n",
                c.name, c.command, c.output
            ));
        }
        if !r.result_text.is_empty() {
            detail.push_str(&format!("\nfinal message:\n{}\n", r.result_text));
        }
        if let Some(t) = &r.transcript_path {
            detail.push_str(&format!("\ntranscript: {}\n", t.display()));
        }
        s.push_str(&format!(
            "\n<details><summary>{} — {}</summary>\n\n{}\n</details>\n",
            md_cell(&r.task_name),
            r.outcome.name(),
            fence(&truncate(&detail, DETAIL_BYTES))
        ));
    }
    truncate(&s, SUMMARY_BUDGET)
}

/// Append `name=value` pairs to `$GITHUB_OUTPUT`, each in a heredoc with a random delimiter.
pub(crate) fn write_outputs(path: &Path, pairs: &[(&str, String)]) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    for (name, value) in pairs {
        let mut delim = random_token();
        while value.contains(&delim) {
            delim = random_token();
        }
        writeln!(f, "{name}<<{delim}\n{value}\n{delim}")?;
    }
    f.flush()
}

/// Everything at the end of a run in Actions: annotations, summary, outputs.
pub fn finish(env: &GithubEnv, results: &[RunResult], junit: Option<&Path>, transcripts: &Path) {
    annotate(results);
    if let Some(p) = &env.step_summary {
        let md = summary_markdown(results);
        let r = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .and_then(|mut f| f.write_all(md.as_bytes()));
        if let Err(e) = r {
            tracing::warn!("cannot write the step summary {}: {e}", p.display());
        }
    }
    if let Some(p) = &env.output {
        let ok = results.iter().all(|r| !r.outcome.is_error());
        let cost: Option<f64> = results
            .iter()
            .map(|r| r.total_cost_usd)
            .try_fold(0.0, |acc, c| c.map(|c| acc + c));
        let mut pairs = vec![
            (
                "conclusion",
                if ok { "success" } else { "failure" }.to_string(),
            ),
            (
                "junit",
                junit.map(|j| j.display().to_string()).unwrap_or_default(),
            ),
            ("transcripts", transcripts.display().to_string()),
            (
                "cost_usd",
                cost.map_or("unknown".to_string(), |c| format!("{c:.6}")),
            ),
        ];
        if crate::report::structured::any(results) {
            pairs.push((
                "structured_output",
                crate::report::structured::combined(results).to_string(),
            ));
        }
        if let Err(e) = write_outputs(p, &pairs) {
            tracing::warn!("cannot write step outputs {}: {e}", p.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_command_data_and_properties() {
        assert_eq!(escape_data("a%b\nc\r"), "a%25b%0Ac%0D");
        assert_eq!(escape_property("x:y,z"), "x%3Ay%2Cz");
    }

    #[test]
    fn outputs_use_unguessable_delimiters() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("out");
        let evil = "x\nconclusion=success\nEOF".to_string();
        write_outputs(&p, &[("conclusion", "failure".into()), ("note", evil)]).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        let first = text.lines().next().unwrap();
        let delim = first.strip_prefix("conclusion<<").unwrap();
        assert!(delim.starts_with("runner-") && delim.len() > 20);
        assert_eq!(text.lines().nth(1), Some("failure"));
        assert_eq!(
            text.matches(delim).count(),
            2,
            "each delimiter is unique per value"
        );
    }

    #[test]
    fn fence_cannot_be_closed_from_inside() {
        let f = fence("```\n::set-output name=x::y\n````");
        assert!(f.starts_with("`````text\n"));
    }

    #[test]
    fn detects_actions() {
        assert!(GithubEnv::from_lookup(|_| None).is_none());
        let env = GithubEnv::from_lookup(|k| match k {
            "GITHUB_ACTIONS" => Some("true".into()),
            "GITHUB_OUTPUT" => Some("/tmp/o".into()),
            _ => None,
        })
        .unwrap();
        assert_eq!(env.output, Some(PathBuf::from("/tmp/o")));
        assert!(env.step_summary.is_none());
    }
}
