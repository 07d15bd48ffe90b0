//! Verify checks: shell commands run in the workdir after the agent finishes. The task passes
//! only if the agent completed and every check exits 0; a failing check's output can be fed
//! back to the agent for another attempt.

use std::path::Path;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use crate::events::CheckResult;
use crate::git::GitSummary;
use crate::permissions::Scope;
use crate::process::ChildPolicy;
use crate::process::run::{End, ShellRun, run_shell};
use crate::spec::{CheckSandbox, VerifyCheck};

/// Time limit of a check without its own `timeout`.
pub(crate) const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(20 * 60);
/// Most characters of a check's output kept for reports and feedback (head and tail).
pub(crate) const MAX_CHECK_OUTPUT: usize = 12_000;

/// Expand `${NAME}` in a check's `env:` value from runner's own environment, so a check can
/// pass a secret through explicitly (`NPM_TOKEN: ${NPM_TOKEN}`). Unset names expand to "".
pub(crate) fn expand_env(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) => {
                out.push_str(&std::env::var(&after[..end]).unwrap_or_default());
                rest = &after[end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Keep the head and tail of `text` within `max` characters.
fn cap(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(n - half).collect();
    format!(
        "{head}\n\n... [{} characters truncated] ...\n\n{tail}",
        n - 2 * half
    )
}

/// Run every check in order (all of them, even after a failure, so the report is complete).
/// `params` (a `matrix:` task's parameters) are exported as `RUNNER_PARAM_<NAME>`, before the
/// check's own `env:`.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn run_checks(
    checks: &[VerifyCheck],
    workdir: &Path,
    env: &ChildPolicy,
    params: &[(String, String)],
    cancel: &CancellationToken,
    spill_dir: &Path,
    attempt: u32,
    report_only: bool,
    integrity: Option<&std::sync::Arc<crate::integrity::Integrity>>,
) -> Vec<CheckResult> {
    let mut results = Vec::with_capacity(checks.len());
    for (i, check) in checks.iter().enumerate() {
        let name = check.name.clone().unwrap_or_else(|| check.run.clone());
        let extra: Vec<(String, String)> = params
            .iter()
            .map(|(k, v)| (crate::spec::expand::env_name(k), v.clone()))
            .chain(check.env.iter().map(|(k, v)| (k.clone(), expand_env(v))))
            .collect();
        let timeout = check.timeout.map_or(DEFAULT_CHECK_TIMEOUT, |t| t.0);
        tracing::info!(check = %name, attempt, "verify check started");
        let started = Instant::now();
        // A check the spec runs with `sandbox: off` gets runner's own rights.
        let unconfined;
        let env = if check.sandbox == CheckSandbox::Off {
            unconfined = env.unconfined();
            &unconfined
        } else {
            env
        };
        let between = crate::integrity::around(integrity, || format!("verify check `{name}`"));
        let done = run_shell(ShellRun {
            script: &check.run,
            cwd: workdir,
            env,
            extra_env: &extra,
            timeout,
            cancel,
            spill_dir,
            spill_name: &format!("check-{attempt}-{i}"),
            scope: Scope::Write,
            report: false,
            on_spawn: None,
        })
        .await;
        drop(between);
        let duration_ms = started.elapsed().as_millis() as u64;
        let result = match done {
            Ok(d) => {
                let mut output = d.stdout.text.clone();
                if !d.stderr.text.is_empty() {
                    if !output.is_empty() {
                        output.push('\n');
                    }
                    output.push_str(&d.stderr.text);
                }
                let timed_out = matches!(d.end, End::TimedOut);
                if timed_out {
                    output.push_str(&format!("\n[check timed out after {}s]", timeout.as_secs()));
                }
                if matches!(d.end, End::Cancelled) {
                    output.push_str("\n[check cancelled: the run was interrupted]");
                }
                CheckResult {
                    passed: matches!(d.end, End::Exited(_)) && d.exit_code == Some(0),
                    exit_code: d.exit_code,
                    timed_out,
                    output: cap(&output, MAX_CHECK_OUTPUT),
                    name: name.clone(),
                    command: check.run.clone(),
                    duration_ms,
                    attempt,
                    report_only,
                }
            }
            Err(e) => fail(
                &name,
                &check.run,
                e.to_string(),
                duration_ms,
                attempt,
                report_only,
            ),
        };
        if result.passed {
            tracing::info!(check = %name, "verify check passed");
        } else {
            match result.exit_code {
                Some(code) => {
                    tracing::warn!(check = %name, exit_code = code, "verify check failed")
                }
                None => tracing::warn!(
                    check = %name,
                    timed_out = result.timed_out,
                    "verify check failed without an exit code"
                ),
            }
        }
        results.push(result);
        if cancel.is_cancelled() {
            break;
        }
    }
    results
}

fn fail(
    name: &str,
    command: &str,
    output: String,
    duration_ms: u64,
    attempt: u32,
    report_only: bool,
) -> CheckResult {
    CheckResult {
        name: name.to_string(),
        command: command.to_string(),
        passed: false,
        exit_code: None,
        timed_out: false,
        duration_ms,
        output,
        attempt,
        report_only,
    }
}

/// The user message that sends failing checks back to the agent.
pub(crate) fn feedback(failed: &[&CheckResult], attempt: u32, attempts: u32) -> String {
    let mut s = format!(
        "The task's verify checks ran after your last answer and {} of them failed (attempt {attempt} of {attempts}). Fix the cause, then finish with a short summary. The checks run again afterwards.\n",
        failed.len()
    );
    for c in failed {
        let status = match (c.timed_out, c.exit_code) {
            (true, _) => "timed out".to_string(),
            (false, Some(code)) => format!("exit code {code}"),
            (false, None) => "did not run".to_string(),
        };
        s.push_str(&format!(
            "\n## Check `{}` failed ({status})\nCommand: {}\nOutput:\n{}\n",
            c.name, c.command, c.output
        ));
    }
    s
}

/// One line naming the failed checks, for the outcome message.
pub(crate) fn summary(failed: &[&CheckResult]) -> String {
    failed
        .iter()
        .map(|c| match (c.timed_out, c.exit_code) {
            (true, _) => format!("`{}` timed out", c.name),
            (false, Some(code)) => format!("`{}` exited {code}", c.name),
            (false, None) => format!("`{}` did not run", c.name),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Name of the check `git.require_changes` adds to a task that changed nothing.
pub(crate) const REQUIRE_CHANGES_CHECK: &str = "git.require_changes";

/// The failed check reported for a task that changed nothing under `git.require_changes`
/// (a JUnit testcase like the verify checks).
pub(crate) fn require_changes_check(summary: &GitSummary) -> CheckResult {
    CheckResult {
        name: REQUIRE_CHANGES_CHECK.to_string(),
        command: format!("git diff {}", summary.base_commit),
        passed: false,
        exit_code: None,
        timed_out: false,
        duration_ms: 0,
        output: format!(
            "the task changed no file (compared with {}); git.require_changes is set",
            summary.base_commit
        ),
        attempt: 1,
        report_only: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::SpecDuration;
    use std::collections::BTreeMap;

    fn check(run: &str) -> VerifyCheck {
        VerifyCheck {
            name: None,
            run: run.into(),
            timeout: None,
            env: BTreeMap::new(),
            trusted: false,
            sandbox: Default::default(),
        }
    }

    #[tokio::test]
    async fn runs_all_checks_and_reports_each() {
        let dir = tempfile::tempdir().unwrap();
        let mut with_env = check("test \"$GREETING\" = hi && echo ok");
        with_env.env.insert("GREETING".into(), "hi".into());
        let mut slow = check("sleep 5");
        slow.timeout = Some(SpecDuration(Duration::from_millis(200)));
        let checks = vec![check("echo out; echo err >&2; exit 3"), with_env, slow];
        let spill = dir.path().join("spill");
        let r = run_checks(
            &checks,
            dir.path(),
            &ChildPolicy::default(),
            &[],
            &CancellationToken::new(),
            &spill,
            1,
            false,
            None,
        )
        .await;
        assert_eq!(r.len(), 3);
        assert!(!r[0].passed);
        assert_eq!(r[0].exit_code, Some(3));
        assert!(r[0].output.contains("out") && r[0].output.contains("err"));
        assert!(r[1].passed, "{:?}", r[1]);
        assert!(!r[2].passed && r[2].timed_out);
        let fb = feedback(&[&r[0]], 1, 2);
        assert!(fb.contains("exit code 3") && fb.contains("attempt 1 of 2"));
        assert_eq!(
            summary(&[&r[0], &r[2]]),
            "`echo out; echo err >&2; exit 3` exited 3, `sleep 5` timed out"
        );
    }

    #[test]
    fn env_expansion_and_capping() {
        // SAFETY of the test: the variable name is unique to this test.
        unsafe { std::env::set_var("RUNNER_VERIFY_TEST_X", "v") };
        assert_eq!(
            expand_env("a${RUNNER_VERIFY_TEST_X}b${RUNNER_NOPE}c${open"),
            "avbc${open"
        );
        let long = "x".repeat(100);
        let c = cap(&long, 20);
        assert!(c.starts_with("xxxxxxxxxx\n") && c.contains("[80 characters truncated]"));
    }
}
