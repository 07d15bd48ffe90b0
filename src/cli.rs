//! Command-line definitions (clap). Parsing only; `app` does the work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::spec::{PermissionMode, ReplayMode, SpecDuration};

const EXEC_EXAMPLES: &str = "\
Examples:
  runner exec tasks/examples/hello-replay.yaml
      Run the offline example (replay provider, no API key needed).
  runner exec task.yaml --junit junit.xml --output-format stream-json
      Run one task, stream Claude Code-compatible events on stdout, write a JUnit report.
  runner exec tasks/ --jobs 4 --max-cost-usd 2 --allowed-tools \"Edit,Bash(cargo test:*)\"
      Run every *.yaml in tasks/, four at a time, with a cost cap and extra allow rules.
  runner exec task.yaml --record cassette.jsonl
      Run live and record the model's responses for later offline replay.
  runner exec task.yaml --replay cassette.jsonl --replay-mode strict
      Prompt regression test: fail (exit 4, with a diff) if any request differs from the recording.

Exit codes: 0 success, 1 agent error or failed checks, 2 invalid input (nothing ran),
3 limit reached (turns, tokens, cost, time, context), 4 API error, 5 denied tool calls
(with permissions.fail_on_denial), 130/143 interrupted by SIGINT/SIGTERM.";

/// Run an LLM coding agent non-interactively, for CI and batch automation.
#[derive(Debug, Parser)]
#[command(name = "runner", version, about, propagate_version = true)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run task specs (files, or directories of *.yaml files).
    #[command(after_help = EXEC_EXAMPLES)]
    Exec(Box<ExecArgs>),
    /// Check task specs without running anything (exit 2 if any is invalid).
    #[command(after_help = "Example:\n  runner validate tasks/ && echo all specs valid")]
    Validate {
        /// Task spec files or directories.
        #[arg(required = true, value_name = "PATH")]
        paths: Vec<PathBuf>,
    },
    /// Print the task spec JSON Schema on stdout.
    #[command(after_help = "Example:\n  runner schema > schema/task.schema.json")]
    Schema,
}

/// What stdout carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// The final answer (a `== NAME (outcome) ==` block per task when several run).
    Text,
    /// One result object per task, one per line.
    Json,
    /// Claude Code's stream-json events, one per line.
    #[value(name = "stream-json")]
    StreamJson,
}

/// `runner exec` arguments.
#[derive(Debug, Args)]
pub struct ExecArgs {
    /// Task spec files or directories of them.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// What stdout carries.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Directory for transcripts and other run outputs.
    #[arg(long, value_name = "DIR", default_value = ".runner")]
    pub transcript_dir: PathBuf,
    /// Directory for each task's patch file (`TASK.patch`, its changes as `git diff` against
    /// the base commit); default `patches/` under `--transcript-dir`.
    #[arg(long, value_name = "DIR")]
    pub patch_dir: Option<PathBuf>,
    /// How many tasks run at once.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub jobs: u32,
    /// Model id (replaces the spec's).
    #[arg(long)]
    pub model: Option<String>,
    /// Turn limit (replaces the spec's).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Cost limit in USD (replaces the spec's).
    #[arg(long, value_name = "USD")]
    pub max_cost_usd: Option<f64>,
    /// Token limit: input + cache + output over all requests (replaces the spec's).
    #[arg(long, value_name = "N")]
    pub max_total_tokens: Option<u64>,
    /// Wall-clock limit per task, e.g. 30m (replaces the spec's).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<SpecDuration>,
    /// Most retries of a failed model request (replaces the spec's retry.max_retries; 0
    /// disables retries).
    #[arg(long, value_name = "N")]
    pub max_retries: Option<u32>,
    /// Permission mode (replaces the spec's).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub permission_mode: Option<PermissionMode>,
    /// Allow rules added to every spec's, e.g. "Read,Bash(git diff *)" (commas or spaces outside parentheses separate rules; repeatable).
    #[arg(long, alias = "allowedTools", value_name = "RULES")]
    pub allowed_tools: Vec<String>,
    /// Deny rules added to every spec's (same syntax; repeatable).
    #[arg(long, alias = "disallowedTools", value_name = "RULES")]
    pub disallowed_tools: Vec<String>,
    /// Claude Code settings.json whose permissions (allow/deny/ask rules, additionalDirectories,
    /// defaultMode) and hooks are added to every spec's. Settings in the workdir are never read.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Record the model's responses to a cassette FILE (one task only).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Replay responses from a cassette FILE instead of calling a model.
    #[arg(long, value_name = "FILE", conflicts_with = "record")]
    pub replay: Option<PathBuf>,
    /// How replay checks requests: lenient (serve in order; tool ids must line up) or strict
    /// (each request must match the recorded one, else exit 4 with a diff). Replaces the spec's
    /// `replay_mode`.
    #[arg(long, value_name = "MODE", value_parser = parse_replay_mode)]
    pub replay_mode: Option<ReplayMode>,
}

fn parse_duration(s: &str) -> Result<SpecDuration, String> {
    SpecDuration::parse(s)
}

fn parse_replay_mode(s: &str) -> Result<ReplayMode, String> {
    ReplayMode::parse(s)
        .ok_or_else(|| format!("unknown replay mode `{s}` (expected strict or lenient)"))
}

fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    PermissionMode::parse(s).ok_or_else(|| {
        format!("unknown permission mode `{s}` (expected default, acceptEdits, plan, dontAsk or bypassPermissions)")
    })
}
