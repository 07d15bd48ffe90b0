//! GitHub Actions integration: step summary, annotations, step outputs, secret masks.
//!
//! Workflow commands go to stderr (the runner reads them there too), because stdout belongs to
//! the chosen output format. Text that came from the model or a tool never reaches the command
//! channel unescaped: the whole run is wrapped in `::stop-commands::TOKEN`, annotation data is
//! escaped, and `$GITHUB_OUTPUT` values use random heredoc delimiters.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::events::RunResult;
use crate::outcome::OutcomeKind;
use crate::report::step_outputs::StepOutputs;
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
    /// `$GITHUB_WORKSPACE`: paths in the summary are shown relative to it.
    pub workspace: Option<PathBuf>,
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
            workspace: path("GITHUB_WORKSPACE"),
        })
    }
}

/// A random token for `::stop-commands::` and heredoc delimiters.
pub fn random_token() -> String {
    format!("runner-{}", uuid::Uuid::new_v4().simple())
}

/// Escape workflow-command message data.
pub fn escape_data(s: &str) -> String {
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
pub fn mask_values(values: &[String]) {
    for v in values.iter().filter(|v| !v.is_empty()) {
        for line in v.lines().filter(|l| !l.trim().is_empty()) {
            stderr_line(&format!("::add-mask::{}", escape_data(line)));
        }
    }
}

/// Stop command processing until [`resume_commands`] with the same token.
pub fn stop_commands(token: &str) {
    stderr_line(&format!("::stop-commands::{token}"));
}

/// Resume command processing.
pub fn resume_commands(token: &str) {
    stderr_line(&format!("::{token}::"));
}

/// The annotation line for a task that did not succeed (None for success, skipped and not
/// started).
pub fn annotation(r: &RunResult) -> Option<String> {
    use crate::outcome::OutcomeKind::*;
    let level = match r.outcome.kind {
        Success | Skipped | NotStarted => return None,
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

/// A money figure for the summary: `$0.0123`, or `—` when unknown (an unpriced model, an
/// offline replay, a task that never ran).
fn money(c: Option<f64>) -> String {
    c.map_or_else(|| "—".to_string(), crate::report::money::usd)
}

/// Input-side tokens (input + cache writes + cache reads).
fn tokens_in(r: &RunResult) -> u64 {
    r.usage
        .input_tokens
        .saturating_add(r.usage.cache_creation_input_tokens)
        .saturating_add(r.usage.cache_read_input_tokens)
}

/// `path` relative to the workspace when it is inside it (so the summary shows
/// `.runner/x/transcript.jsonl`, not the CI machine's absolute path).
fn shown_path(path: &Path, workspace: Option<&Path>) -> String {
    let rel = workspace
        .and_then(|w| path.strip_prefix(w).ok())
        .filter(|r| !r.as_os_str().is_empty())
        .unwrap_or(path);
    rel.display().to_string()
}

/// The totals row: tasks, passed, failed (and skipped, not started), tokens, cost.
fn totals_row(results: &[RunResult]) -> String {
    let passed = results
        .iter()
        .filter(|r| r.outcome.kind == OutcomeKind::Success)
        .count();
    let count = |kind| results.iter().filter(|r| r.outcome.kind == kind).count();
    let skipped = count(OutcomeKind::Skipped);
    let not_started = count(OutcomeKind::NotStarted);
    let failed = results.len() - passed - skipped - not_started;
    let (tin, tout) = results.iter().fold((0u64, 0u64), |(i, o), r| {
        (
            i.saturating_add(tokens_in(r)),
            o.saturating_add(r.usage.output_tokens),
        )
    });
    let ran: Vec<&RunResult> = results.iter().filter(|r| r.num_turns > 0).collect();
    let known: Vec<f64> = ran.iter().filter_map(|r| r.total_cost_usd).collect();
    let cost = match (known.len(), ran.len()) {
        (0, _) => "—".to_string(),
        (k, n) if k == n => money(Some(known.iter().sum())),
        _ => format!("{} + unknown", money(Some(known.iter().sum()))),
    };
    let mut outcome = format!("{passed} passed, {failed} failed");
    if skipped > 0 {
        outcome.push_str(&format!(", {skipped} skipped"));
    }
    if not_started > 0 {
        outcome.push_str(&format!(", {not_started} not started"));
    }
    format!(
        "| **total: {} task{}** | **{outcome}** | | **{tin}/{tout}** | **{cost}** | | |\n",
        results.len(),
        if results.len() == 1 { "" } else { "s" }
    )
}

/// One part of a task's section in the summary: a bold title and Markdown under it.
struct Section {
    title: &'static str,
    body: String,
}

/// The parts of a task's section, in order. Each is self-contained Markdown: a new kind of
/// information about a task is one more `Section` here.
fn task_sections(r: &RunResult, workspace: Option<&Path>) -> Vec<Section> {
    let mut out = Vec::new();
    // A failed check is told once: in its own part, not again through the outcome message.
    if r.outcome.is_error() && r.outcome.kind != OutcomeKind::ChecksFailed {
        out.push(Section {
            title: "Why it failed",
            body: fence(&truncate(&r.outcome.message, DETAIL_BYTES)),
        });
    }
    let failed: Vec<_> = r.checks.iter().filter(|c| !c.passed).collect();
    if !failed.is_empty() {
        let mut text = String::new();
        for c in failed {
            text.push_str(&format!(
                "check `{}` ({}):\n{}\n\n",
                c.name, c.command, c.output
            ));
        }
        out.push(Section {
            title: "Failed checks",
            body: fence(&truncate(text.trim_end(), DETAIL_BYTES)),
        });
    }
    let answer = match &r.structured_output {
        Some(v) => serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()),
        None => r.result_text.clone(),
    };
    if !answer.trim().is_empty() {
        out.push(Section {
            title: "Answer",
            body: fence(&truncate(&answer, DETAIL_BYTES)),
        });
    }
    if let Some(body) = git_lines(r, workspace) {
        out.push(Section {
            title: "Branch and patch",
            body,
        });
    }
    if let Some(body) = crate::report::footprint::files_table(r) {
        out.push(Section {
            title: "Files changed",
            body,
        });
    }
    if let Some(body) = crate::report::footprint::commands_table(r) {
        out.push(Section {
            title: "Commands run",
            body,
        });
    }
    if !r.permission_denials.is_empty() {
        let mut body = String::new();
        for d in &r.permission_denials {
            body.push_str(&format!(
                "- `{}` {} — {}\n",
                md_cell(&d.tool_name),
                code_span(&crate::report::tool_log::summary(
                    &d.tool_name,
                    &d.tool_input
                )),
                md_cell(&d.reason)
            ));
        }
        out.push(Section {
            title: "Denied calls",
            body,
        });
    }
    if let Some(t) = &r.transcript_path {
        out.push(Section {
            title: "Transcript",
            body: format!("{}\n", code_span(&shown_path(t, workspace))),
        });
    }
    out
}

/// Where a task's changes are: the branch they were committed on (with the commit) and the
/// patch file, relative to the workspace; `None` when it wrote neither.
fn git_lines(r: &RunResult, workspace: Option<&Path>) -> Option<String> {
    let g = r.git.as_ref()?;
    let mut body = String::new();
    if let Some(branch) = &g.branch {
        body.push_str(&format!("- branch {}", code_span(branch)));
        if let Some(c) = &g.commit {
            body.push_str(&format!(
                " (commit {})",
                code_span(c.get(..12).unwrap_or(c))
            ));
        }
        body.push('\n');
    }
    if let Some(p) = &g.patch {
        let empty = if g.changed {
            ""
        } else {
            " (empty: no changes)"
        };
        body.push_str(&format!(
            "- patch {}{empty}\n",
            code_span(&shown_path(p, workspace))
        ));
    }
    (!body.is_empty()).then_some(body)
}

/// `text` as an inline code span that nothing inside can close.
fn code_span(text: &str) -> String {
    let text = md_cell(text);
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let ticks = "`".repeat(longest + 1);
    format!("{ticks} {text} {ticks}")
}

/// A task's collapsible section; open when the task failed.
fn task_details(r: &RunResult, workspace: Option<&Path>) -> String {
    let icon = outcome_icon(r);
    let open = if r.outcome.is_error() { " open" } else { "" };
    let mut s = format!(
        "\n<details{open}><summary><b>{}</b> — {icon} {}</summary>\n\n",
        md_cell(&r.task_name),
        r.outcome.name()
    );
    for sec in task_sections(r, workspace) {
        s.push_str(&format!("**{}**\n\n{}\n", sec.title, sec.body));
    }
    s.push_str("</details>\n");
    s
}

fn outcome_icon(r: &RunResult) -> &'static str {
    match r.outcome.kind {
        OutcomeKind::Success => "✅",
        OutcomeKind::Skipped | OutcomeKind::NotStarted => "⏭️",
        _ => "❌",
    }
}

/// The Markdown step summary for a run: a row per task and a totals row, the sandbox, then a
/// section per task (its answer, failed checks, files changed, commands run, denied calls,
/// transcript; failed tasks open), paths relative to `workspace` (`$GITHUB_WORKSPACE`), and
/// where the transcripts are.
pub(crate) fn summary_markdown(
    results: &[RunResult],
    workspace: Option<&Path>,
    transcripts: &Path,
) -> String {
    let mut s = String::from(
        "## runner\n\n| task | outcome | turns | tokens (in/out) | cost | duration | checks |\n|---|---|---|---|---|---|---|\n",
    );
    for r in results {
        let passed = r.checks.iter().filter(|c| c.passed).count();
        let checks = if r.checks.is_empty() {
            "—".to_string()
        } else {
            format!("{passed}/{}", r.checks.len())
        };
        s.push_str(&format!(
            "| {} | {} {} | {} | {}/{} | {} | {:.1}s | {checks} |\n",
            md_cell(&r.task_name),
            outcome_icon(r),
            r.outcome.name(),
            r.num_turns,
            tokens_in(r),
            r.usage.output_tokens,
            money(r.total_cost_usd),
            r.duration_ms as f64 / 1000.0,
        ));
    }
    if results.len() > 1 {
        s.push_str(&totals_row(results));
    }
    s.push_str(&sandbox_lines(results));
    if let Some(line) = crate::report::rate_limit::line(results) {
        s.push_str(&format!("\n{}\n", md_cell(&line)));
    }
    // Failed tasks first: they matter most when the summary has to be cut.
    let mut order: Vec<&RunResult> = results.iter().collect();
    order.sort_by_key(|r| !r.outcome.is_error());
    for r in order {
        if s.len() > SUMMARY_BUDGET {
            s.push_str(
                "\n_(more tasks omitted: the summary is kept under GitHub's 1 MiB limit)_\n",
            );
            break;
        }
        s.push_str(&task_details(r, workspace));
    }
    if results.iter().any(|r| r.transcript_path.is_some()) {
        s.push_str(&format!(
            "\nTranscripts, patches and `result.json` files are under {}: upload that directory \
             as an artifact (`actions/upload-artifact`) to keep them.\n",
            code_span(&shown_path(transcripts, workspace))
        ));
    }
    truncate(&s, SUMMARY_BUDGET)
}

/// Append `name=value` pairs to `$GITHUB_OUTPUT`, each in a heredoc with a random delimiter.
pub(crate) fn write_outputs(path: &Path, pairs: &[(String, String)]) -> std::io::Result<()> {
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

/// Everything at the end of a run in Actions: annotations, summary, outputs. A summary or
/// outputs file that cannot be written is returned, naming the file.
pub fn finish(
    env: &GithubEnv,
    results: &[RunResult],
    junit: Option<&Path>,
    transcripts: &Path,
) -> Result<(), String> {
    annotate(results);
    let mut failed = Vec::new();
    if let Some(p) = &env.step_summary {
        let md = summary_markdown(results, env.workspace.as_deref(), transcripts);
        let r = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .and_then(|mut f| f.write_all(md.as_bytes()));
        if let Err(e) = r {
            let why = format!("cannot write the step summary {}: {e}", p.display());
            tracing::error!("{why}");
            failed.push(why);
        }
    }
    if let Some(p) = &env.output {
        let pairs = StepOutputs::new(results, junit, transcripts).pairs();
        if let Err(e) = write_outputs(p, &pairs) {
            let why = format!("cannot write the step outputs {}: {e}", p.display());
            tracing::error!("{why}");
            failed.push(why);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(failed.join("; "))
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
        write_outputs(
            &p,
            &[
                ("conclusion".into(), "failure".into()),
                ("note".into(), evil),
            ],
        )
        .unwrap();
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

    /// A batch of three: a success with an answer and a denied call, a failed check, a
    /// replayed task (no cost), all under the workspace `/home/runner/work/repo`.
    fn batch() -> Vec<RunResult> {
        use crate::contract::fixtures;
        use crate::outcome::Outcome;
        let ws = Path::new("/home/runner/work/repo");
        let mut ok = fixtures::full_success();
        ok.task_name = "review".into();
        ok.structured_output = None;
        ok.result_text = "Verdict: approve. The change is small and tested.".into();
        ok.transcript_path = Some(ws.join(".runner/review-1/transcript.jsonl"));
        if let Some(g) = ok.git.as_mut() {
            g.patch = Some(ws.join(".runner/patches/review.patch"));
            g.branch = Some("runner/review".into());
        }
        let mut failed = fixtures::result(Outcome::new(
            OutcomeKind::ChecksFailed,
            "check `tests` failed (exit 1)",
        ));
        failed.task_name = "fix-tests".into();
        failed.total_cost_usd = Some(0.5);
        failed.result_text = "I fixed the tests.".into();
        let mut check = fixtures::check("tests", false, 1);
        check.output = "test a ... FAILED".into();
        failed.checks = vec![check];
        failed.transcript_path = Some(ws.join(".runner/fix-tests-1/transcript.jsonl"));
        let mut replayed = fixtures::result(Outcome::new(OutcomeKind::Success, "completed"));
        replayed.task_name = "replayed".into();
        replayed.result_text = "ok".into();
        vec![ok, failed, replayed]
    }

    #[test]
    fn summary_snapshot() {
        let ws = Path::new("/home/runner/work/repo");
        let md = summary_markdown(&batch(), Some(ws), &ws.join(".runner"));
        insta::assert_snapshot!(md);
    }

    #[test]
    fn summary_totals_answers_denials_and_relative_paths() {
        let ws = Path::new("/home/runner/work/repo");
        let md = summary_markdown(&batch(), Some(ws), &ws.join(".runner"));
        assert!(
            md.contains("| **total: 3 tasks** | **2 passed, 1 failed** |"),
            "{md}"
        );
        // The replay has no cost: shown as a dash, and the total says part is unknown.
        assert!(
            md.contains("| replayed | ✅ success | 2 | 2130/45 | — |"),
            "{md}"
        );
        assert!(md.contains("**$0.5125 + unknown**"), "{md}");
        assert!(
            md.contains("<details open><summary><b>fix-tests</b>"),
            "{md}"
        );
        assert!(md.contains("<details><summary><b>review</b>"), "{md}");
        assert!(md.contains("Verdict: approve."), "{md}");
        assert!(md.contains("no allow rule matches"), "{md}");
        assert!(
            md.contains("` .runner/fix-tests-1/transcript.jsonl `"),
            "{md}"
        );
        // Where the successful task's changes are: its branch and commit, and its patch.
        assert!(
            md.contains("- branch ` runner/review ` (commit ` cccccccccccc `)\n- patch ` .runner/patches/review.patch `\n"),
            "{md}"
        );
        assert!(!md.contains("/home/runner"), "{md}");
        assert!(md.contains("upload that directory as an artifact"), "{md}");
        // The failed check is told once.
        assert_eq!(md.matches("`tests`").count(), 1, "{md}");
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
