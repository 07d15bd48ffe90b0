//! The Bash tool: `bash -c` in its own process group, with a timeout, output capture with
//! head/tail truncation and spill files, and a working directory that persists between calls.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::util;
use super::{Access, CallError, Tool, ToolContext, ToolFatal, ToolOutput};
use crate::process::capture::Captured;
use crate::process::run::{End, RunError, ShellDone, ShellRun, run_shell};

/// Timeout when the call gives none, in milliseconds.
pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// Largest timeout a call may ask for, in milliseconds.
pub(crate) const MAX_TIMEOUT_MS: u64 = 600_000;

/// Commands for which exit code 1 means "no match / differs", not failure.
const EXIT_ONE_OK: &[&str] = &["grep", "rg", "egrep", "fgrep", "diff", "test", "[", "find"];
/// `git` subcommands for which exit code 1 is not a failure.
const GIT_EXIT_ONE_OK: &[&str] = &["diff", "grep"];

/// The Bash tool.
#[derive(Clone, Copy)]
pub(crate) struct BashTool;

/// The Bash tool's input.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct BashInput {
    command: String,
    #[serde(default, deserialize_with = "util::de_opt_u64")]
    timeout: Option<u64>,
    #[serde(default, deserialize_with = "util::de_opt_bool")]
    run_in_background: Option<bool>,
    /// A few words on what the command does, for a human reader; not used.
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
    /// Claude Code's opt-out of its sandbox; runner never lets the model lift confinement,
    /// so the field is accepted and ignored.
    #[serde(default, rename = "dangerouslyDisableSandbox")]
    #[allow(dead_code)]
    dangerously_disable_sandbox: Option<bool>,
}

const DESCRIPTION: &str = "Executes a bash command (`bash -c`) and returns its output.

- The command runs in the task's working directory with no terminal and stdin from /dev/null: \
never run interactive commands (editors, pagers, prompts); pass flags such as --yes or \
--no-pager instead.
- The working directory persists between commands while it stays inside the workspace (a `cd` \
outside it is reset); environment variables and shell state do not persist.
- timeout is in milliseconds: default 120000 (2 minutes), at most 600000 (10 minutes). On \
timeout the command and every process it started are killed.
- Processes left running in the background when the command ends are killed; \
run_in_background is not supported.
- stdout and stderr are returned (each truncated to 30000 characters, keeping the start and the \
end; the full output is saved to a file whose path is given). A non-zero exit code is reported \
as an error, except exit code 1 of grep, rg, diff, test, find, git diff and git grep.
- Prefer the Read, Edit, Write, Glob and Grep tools over cat, sed, echo >, find and grep.
- Quote paths that contain spaces. Chain dependent commands with &&.";

/// A checked Bash call.
pub(crate) struct Parsed {
    command: String,
    timeout: Duration,
}

impl BashTool {
    fn parse(&self, raw: BashInput) -> Result<Parsed, CallError> {
        if raw.command.trim().is_empty() {
            return Err("`command` must not be empty".into());
        }
        if raw.run_in_background == Some(true) {
            return Err(
                "`run_in_background` is not supported by this runner; run the command in the \
                 foreground (with a `timeout` up to 600000 ms)"
                    .into(),
            );
        }
        let ms = raw.timeout.unwrap_or(DEFAULT_TIMEOUT_MS);
        if ms == 0 || ms > MAX_TIMEOUT_MS {
            return Err(call_error!(
                "`timeout` must be between 1 and {MAX_TIMEOUT_MS} ms, got {ms}"
            ));
        }
        Ok(Parsed {
            command: raw.command,
            timeout: Duration::from_millis(ms),
        })
    }
}

#[async_trait::async_trait]
impl Tool for BashTool {
    type Input = BashInput;
    type Call = Parsed;

    fn name(&self) -> &'static str {
        "Bash"
    }

    fn description(&self) -> &'static str {
        DESCRIPTION
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {
                    "type": "string",
                    "description": "The command to execute"
                },
                "timeout": {
                    "type": "number",
                    "description": "Optional timeout in milliseconds (max 600000)"
                },
                "description": {
                    "type": "string",
                    "description": "Clear, concise description of what this command does in 5-10 words, in active voice."
                },
                "run_in_background": {
                    "type": "boolean",
                    "description": "Set to true to run this command in the background (not supported by this runner)."
                },
                "dangerouslyDisableSandbox": {
                    "type": "boolean",
                    "description": "Set this to true to dangerously override sandbox mode and run commands without sandboxing."
                }
            },
            "required": ["command"],
            "additionalProperties": false,
            "$schema": "http://json-schema.org/draft-07/schema#"
        })
    }

    fn check(&self, input: BashInput, _ctx: &ToolContext) -> Result<Parsed, CallError> {
        self.parse(input)
    }

    fn access(&self, call: &Parsed) -> Access {
        Access::Exec(call.command.clone())
    }

    async fn call(&self, parsed: Parsed, ctx: &ToolContext) -> Result<ToolOutput, ToolFatal> {
        run(ctx, &parsed).await
    }
}

fn fatal(message: String) -> ToolFatal {
    ToolFatal {
        tool: "Bash".to_string(),
        message,
    }
}

async fn run(ctx: &ToolContext, p: &Parsed) -> Result<ToolOutput, ToolFatal> {
    let workdir = ctx.session.roots.workdir.clone();
    let mut cwd = ctx
        .session
        .bash_cwd
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    if !cwd.is_dir() {
        cwd = workdir.clone();
    }
    let id = uuid::Uuid::new_v4();
    // The shell reports its final directory on the report pipe (a file would need a writable
    // place, which a confined read-only command does not have).
    let script = format!(
        "trap 'pwd -P >&{fd} 2>/dev/null' EXIT\n{}",
        p.command,
        fd = crate::process::REPORT_FD
    );
    let announce = ctx.started.clone().map(|s| move |group| s.announce(group));
    let done = run_shell(ShellRun {
        script: &script,
        cwd: &cwd,
        env: &ctx.session.env,
        extra_env: &[],
        timeout: p.timeout,
        cancel: &ctx.cancel,
        spill_dir: &ctx.session.spill_dir,
        spill_name: &format!("bash-{id}"),
        scope: ctx.scope,
        report: true,
        on_spawn: announce.as_ref().map(|f| f as &(dyn Fn(_) + Sync)),
    })
    .await;
    let done = match done {
        Ok(d) => d,
        Err(e @ RunError::Spawn(_)) => {
            tracing::warn!(command = %p.command, "{e}");
            return Ok(ToolOutput::error(e.to_string()));
        }
        Err(RunError::Output(e)) => return Err(fatal(e)),
    };
    tracing::debug!(command = %p.command, cwd = %cwd.display(), "Bash done");
    let ShellDone {
        end,
        exit_code,
        stdout,
        stderr,
        report,
    } = done;

    // The final working directory.
    let mut cwd_note = None;
    if let Some(text) = report {
        let new_cwd = PathBuf::from(text.lines().last().unwrap_or_default());
        let mut state = ctx
            .session
            .bash_cwd
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if new_cwd.is_absolute() && ctx.session.roots.is_inside_workspace(&new_cwd) {
            *state = new_cwd;
        } else {
            *state = workdir.clone();
            cwd_note = Some(format!("Shell cwd was reset to {}", workdir.display()));
        }
    }

    let hint = ctx
        .session
        .env
        .sandbox
        .as_ref()
        .filter(|_| exit_code.is_some_and(|c| c != 0))
        .filter(|_| looks_confined(&stdout.text) || looks_confined(&stderr.text))
        .and_then(|s| s.hint(ctx.scope));
    let mut out = render(p, &end, exit_code, stdout, stderr, cwd_note);
    if let Some(hint) = hint {
        out.content.push('\n');
        out.content.push_str(&hint);
    }
    Ok(out)
}

/// Whether a command's output reads like the sandbox stopped it: a permission error, a
/// read-only file system, a refused or unreachable connection, a failed name lookup.
fn looks_confined(text: &str) -> bool {
    const SIGNS: &[&str] = &[
        "Permission denied",
        "Operation not permitted",
        "Read-only file system",
        "Connection refused",
        "Network is unreachable",
        "Temporary failure in name resolution",
        "Could not resolve host",
        "Name or service not known",
        "runner sandbox:",
    ];
    SIGNS.iter().any(|s| text.contains(s))
}

fn render(
    p: &Parsed,
    end: &End,
    exit_code: Option<i32>,
    stdout: Captured,
    stderr: Captured,
    cwd_note: Option<String>,
) -> ToolOutput {
    let interrupted = !matches!(end, End::Exited(_));
    let interpretation = match exit_code {
        Some(1) if exit_one_is_ok(&p.command) => Some("Exit code 1 (no matches or differences)"),
        _ => None,
    };
    let failed = interrupted || (exit_code != Some(0) && interpretation.is_none());

    let mut parts: Vec<String> = Vec::new();
    if !stdout.text.is_empty() {
        parts.push(stdout.text.clone());
    }
    if !stderr.text.is_empty() {
        parts.push(stderr.text.clone());
    }
    let mut timed_out_ms = None;
    match end {
        End::TimedOut => {
            let ms = p.timeout.as_millis() as u64;
            timed_out_ms = Some(ms);
            parts.push(format!(
                "Command timed out after {ms} ms and was killed (with every process it started)."
            ));
        }
        End::Cancelled => parts.push("Command was interrupted: the run was cancelled.".into()),
        End::Exited(_) => {
            if let Some(code) = exit_code.filter(|c| *c != 0) {
                parts.push(format!("Exit code {code}"));
            }
        }
    }
    for (name, c) in [("stdout", &stdout), ("stderr", &stderr)] {
        if let Some(path) = &c.spill_path {
            parts.push(format!(
                "Full {name} ({} bytes) saved to: {}",
                c.total_bytes,
                path.display()
            ));
        }
    }
    if let Some(note) = &cwd_note {
        parts.push(note.clone());
    }
    let content = if parts.is_empty() {
        "(No output)".to_string()
    } else {
        parts.join("\n")
    };

    let mut structured = json!({
        "stdout": stdout.text,
        "stderr": stderr.text,
        "interrupted": interrupted,
        "isImage": false,
        "noOutputExpected": false,
    });
    if let Some(code) = exit_code {
        structured["exitCode"] = json!(code);
    }
    if let Some(ms) = timed_out_ms {
        structured["timedOutAfterMs"] = json!(ms);
    }
    if let Some(i) = interpretation {
        structured["returnCodeInterpretation"] = json!(i);
    }
    if let Some(path) = &stdout.spill_path {
        structured["persistedOutputPath"] = json!(path.to_string_lossy());
        structured["persistedOutputSize"] = json!(stdout.total_bytes);
    }
    if let Some(path) = &stderr.spill_path {
        structured["persistedStderrPath"] = json!(path.to_string_lossy());
    }
    ToolOutput {
        content,
        is_error: failed,
        structured: Some(structured),
        command: Some(super::CommandEnd {
            exit_code,
            timed_out: timed_out_ms.is_some(),
        }),
    }
}

/// Whether exit code 1 of `command` means "no match / differs" (decided by its first words).
fn exit_one_is_ok(command: &str) -> bool {
    let mut words = command.split_whitespace().skip_while(|w| is_assignment(w));
    let Some(first) = words.next() else {
        return false;
    };
    let base = first.rsplit('/').next().unwrap_or(first);
    if EXIT_ONE_OK.contains(&base) {
        return true;
    }
    base == "git"
        && words
            .find(|w| !w.starts_with('-'))
            .is_some_and(|sub| GIT_EXIT_ONE_OK.contains(&sub))
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::capture::MAX_OUTPUT_CHARS;
    use crate::tools::util::test_support::{call, ctx, validate};
    use std::time::Instant;

    async fn bash(ctx: &ToolContext, input: Value) -> ToolOutput {
        call(&BashTool, input, ctx).await.unwrap()
    }

    /// Live (non-zombie) processes whose command line contains all of `words`.
    fn live_processes(words: &[&str]) -> usize {
        let mut n = 0;
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let dir = entry.path();
            let Ok(cmdline) = std::fs::read(dir.join("cmdline")) else {
                continue;
            };
            let args: Vec<String> = cmdline
                .split(|b| *b == 0)
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            if !words.iter().all(|w| args.iter().any(|a| a == w)) {
                continue;
            }
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            if !state.starts_with('Z') {
                n += 1;
            }
        }
        n
    }

    #[tokio::test]
    async fn runs_in_workdir_and_reports_exit_codes() {
        let (_d, ctx) = ctx();
        let out = bash(&ctx, json!({"command": "pwd; echo err >&2"})).await;
        assert!(!out.is_error, "{}", out.content);
        let w = ctx.session.roots.workdir.display().to_string();
        assert_eq!(out.content, format!("{w}\nerr"));
        let s = out.structured.unwrap();
        assert_eq!(s["stdout"], w);
        assert_eq!(s["stderr"], "err");
        assert_eq!(s["exitCode"], 0);
        assert_eq!(s["interrupted"], false);

        let out = bash(&ctx, json!({"command": "echo nope; exit 3"})).await;
        assert!(out.is_error);
        assert!(out.content.ends_with("Exit code 3"), "{}", out.content);

        let out = bash(
            &ctx,
            json!({"command": "true </dev/stdin && read x; echo $?"}),
        )
        .await;
        assert_eq!(out.content, "1", "stdin is /dev/null");

        let out = bash(&ctx, json!({"command": "printf 'a\\xffb'"})).await;
        assert_eq!(out.content, "a\u{fffd}b");
    }

    #[tokio::test]
    async fn exit_one_of_search_commands_is_not_an_error() {
        let (_d, ctx) = ctx();
        let out = bash(&ctx, json!({"command": "grep -q zzz /dev/null"})).await;
        assert!(!out.is_error, "{}", out.content);
        assert_eq!(out.structured.unwrap()["exitCode"], 1);
        let out = bash(&ctx, json!({"command": "LC_ALL=C test -f /nonexistent"})).await;
        assert!(!out.is_error);
        let out = bash(&ctx, json!({"command": "ls /nonexistent-dir"})).await;
        assert!(out.is_error);
        assert!(exit_one_is_ok("git --no-pager diff --quiet"));
        assert!(exit_one_is_ok("/usr/bin/diff a b"));
        assert!(!exit_one_is_ok("git status"));
        assert!(!exit_one_is_ok("cargo test"));
    }

    #[tokio::test]
    async fn cwd_persists_inside_workdir_and_env_does_not() {
        let (_d, ctx) = ctx();
        let w = ctx.session.roots.workdir.clone();
        std::fs::create_dir_all(w.join("sub")).unwrap();
        bash(&ctx, json!({"command": "cd sub && export FOO=bar"})).await;
        let out = bash(&ctx, json!({"command": "pwd; echo \"[$FOO]\""})).await;
        assert_eq!(out.content, format!("{}\n[]", w.join("sub").display()));

        let out = bash(&ctx, json!({"command": "cd /"})).await;
        assert!(
            out.content.contains("Shell cwd was reset to"),
            "{}",
            out.content
        );
        let out = bash(&ctx, json!({"command": "pwd"})).await;
        assert_eq!(out.content, w.display().to_string());

        // `exit` still records the directory.
        bash(&ctx, json!({"command": "cd sub; exit 0"})).await;
        assert_eq!(*ctx.session.bash_cwd.lock().unwrap(), w.join("sub"));
    }

    #[tokio::test]
    async fn environment_policy_is_applied() {
        let (_d, mut ctx) = ctx();
        assert!(std::env::var_os("HOME").is_some(), "test needs HOME set");
        let out = bash(&ctx, json!({"command": "echo \"[${HOME:+set}]\""})).await;
        assert_eq!(out.content, "[set]");
        std::sync::Arc::get_mut(&mut ctx.session).unwrap().env =
            std::sync::Arc::new(crate::process::ChildPolicy {
                remove: vec!["HOME".into()],
                ..Default::default()
            });
        let out = bash(&ctx, json!({"command": "echo \"[${HOME:-unset}]\""})).await;
        assert_eq!(out.content, "[unset]");
    }

    #[test]
    fn process_scan_sees_live_processes() {
        let mut child = std::process::Command::new("sleep")
            .arg("310")
            .spawn()
            .unwrap();
        let mut seen = 0;
        for _ in 0..100 {
            seen = live_processes(&["sleep", "310"]);
            if seen > 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(seen, 1);
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(live_processes(&["sleep", "310"]), 0);
    }

    #[tokio::test]
    async fn timeout_kills_the_whole_group() {
        let (_d, ctx) = ctx();
        let start = Instant::now();
        let out = bash(
            &ctx,
            json!({"command": "sleep 311 & sleep 311 & wait", "timeout": 300}),
        )
        .await;
        assert!(start.elapsed() < Duration::from_secs(5));
        assert!(out.is_error);
        assert!(out.content.contains("timed out"), "{}", out.content);
        let s = out.structured.unwrap();
        assert_eq!(s["interrupted"], true);
        assert_eq!(s["timedOutAfterMs"], 300);
        assert_eq!(live_processes(&["sleep", "311"]), 0);
    }

    #[tokio::test]
    async fn sigterm_ignoring_children_get_sigkill() {
        let (_d, ctx) = ctx();
        let out = bash(
            &ctx,
            json!({"command": "trap '' TERM; sleep 312 & wait", "timeout": 200}),
        )
        .await;
        assert!(out.is_error);
        assert_eq!(live_processes(&["sleep", "312"]), 0);
    }

    #[tokio::test]
    async fn background_leftovers_are_killed_when_the_command_ends() {
        let (_d, ctx) = ctx();
        let start = Instant::now();
        let out = bash(&ctx, json!({"command": "sleep 313 & echo started"})).await;
        assert!(start.elapsed() < Duration::from_secs(5));
        assert_eq!(out.content, "started");
        assert!(!out.is_error);
        assert_eq!(live_processes(&["sleep", "313"]), 0);
    }

    #[tokio::test]
    async fn cancellation_interrupts() {
        let (_d, ctx) = ctx();
        let cancel = ctx.cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(200)).await;
            cancel.cancel();
        });
        let out = bash(&ctx, json!({"command": "sleep 314"})).await;
        assert!(out.is_error);
        assert!(out.content.contains("interrupted"));
        assert_eq!(out.structured.unwrap()["interrupted"], true);
        assert_eq!(live_processes(&["sleep", "314"]), 0);
    }

    #[tokio::test]
    async fn long_output_is_truncated_and_spilled() {
        let (_d, ctx) = ctx();
        let out = bash(
            &ctx,
            json!({"command": "echo START; seq 1 100000; echo END"}),
        )
        .await;
        assert!(!out.is_error);
        let s = out.structured.unwrap();
        let stdout = s["stdout"].as_str().unwrap();
        assert!(stdout.starts_with("START\n1\n2\n"));
        assert!(stdout.ends_with("99999\n100000\nEND"));
        assert!(stdout.contains("characters truncated] ..."));
        assert!(stdout.chars().count() < MAX_OUTPUT_CHARS + 100);
        let path = s["persistedOutputPath"].as_str().unwrap();
        assert!(path.starts_with(&*ctx.session.spill_dir.to_string_lossy()));
        assert!(out.content.contains(path));
        let full = std::fs::read_to_string(path).unwrap();
        let expected: String = std::iter::once("START".to_string())
            .chain((1..=100000).map(|i| i.to_string()))
            .chain(std::iter::once("END".to_string()))
            .map(|l| l + "\n")
            .collect();
        assert_eq!(full, expected);
        assert_eq!(s["persistedOutputSize"], expected.len());
        // The marker counts exactly what was dropped.
        let dropped: usize = stdout
            .split("... [")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(dropped, expected.len() - 1 - 2 * (MAX_OUTPUT_CHARS / 2));
    }

    #[test]
    fn input_rules() {
        let (_d, ctx) = ctx();
        let e = validate(
            &BashTool,
            &json!({"command": "ls", "run_in_background": true}),
            &ctx,
        )
        .unwrap_err();
        assert!(e.contains("run_in_background"));
        let e = validate(
            &BashTool,
            &json!({"command": "ls", "timeout": 600001}),
            &ctx,
        )
        .unwrap_err();
        assert!(e.contains("timeout"));
        let e = validate(&BashTool, &json!({}), &ctx).unwrap_err();
        assert!(e.contains("`command`"));
        validate(
            &BashTool,
            &json!({"command": "ls", "timeout": 1000, "description": "list"}),
            &ctx,
        )
        .unwrap();
    }
}
