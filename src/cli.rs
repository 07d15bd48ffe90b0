//! Command-line definitions (clap). Parsing only; `app` does the work.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::spec::{
    NetworkSetting, PermissionMode, ProviderKind, ReplayMode, SandboxMode, SpecDuration,
};

pub mod foreign;
pub mod prompt_file;
pub mod stdin;

const EXEC_EXAMPLES: &str = "\
Examples:
  runner exec -p \"Fix the failing tests\" --allowed-tools \"Edit,Bash(cargo test:*)\"
      Run one task given inline: a spec built from the flags, in the current directory.
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

/// The examples `runner --help` ends with: the first commands a new user runs.
const TOP_EXAMPLES: &str = "\
Examples:
  runner -p \"Fix the failing tests\" --allowed-tools \"Edit,Bash(cargo test:*)\"
      One task given inline (the same as `runner exec -p ...`); the answer on stdout.
  cat prompt.md | runner -p - --model gpt-4o
      The prompt on stdin; the provider follows the model's name.
  runner exec tasks/examples/hello-replay.yaml
      The offline example from a clone (replay provider, no API key needed).
  runner init fix-tests --workflow && runner validate tasks/
      A spec for the project's tests and a GitHub workflow that runs it, checked.

`runner COMMAND --help` shows each command's flags and more examples.";

const RESUME_EXAMPLES: &str = "\
Examples:
  runner resume .runner/fix-clippy-20260820T102154-1f2e3d4c/transcript.jsonl
      Continue an interrupted run with the spec it ran with; budgets continue from its totals.
  runner resume 1f2e3d4c --max-turns 40
      The same by session id (or a unique prefix of it), looked up under --transcript-dir.
  runner resume transcript.jsonl task.yaml --use-current-spec --max-turns 40
      Continue with the spec file as it is now and a higher turn limit.
  runner resume ~/.claude/projects/p/SESSION.jsonl task.yaml
      Continue a Claude Code session under the task spec's tools, permissions and limits.

The run appends to the same transcript and keeps its session id. Exit codes as for exec;
2 if the transcript cannot be resumed (nothing ran).";

/// `runner --version`: the version, the git commit and the target the binary was built for
/// (both set by build.rs; the commit is `unknown` for a build outside git), and the repository
/// it is published from.
pub(crate) const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("RUNNER_GIT_COMMIT"),
    ", ",
    env!("RUNNER_BUILD_TARGET"),
    ")\nsource: ",
    env!("CARGO_PKG_REPOSITORY")
);

/// Run an LLM coding agent non-interactively, for CI and batch automation.
#[derive(Debug, Parser)]
#[command(
    name = "runner",
    version = LONG_VERSION,
    about,
    propagate_version = true,
    after_help = TOP_EXAMPLES
)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
    /// How much runner says on stderr.
    #[command(flatten)]
    pub verbosity: crate::log::Verbosity,
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
    /// Continue an interrupted run from its transcript (same as `exec --resume`).
    #[command(after_help = RESUME_EXAMPLES)]
    Resume(Box<ResumeArgs>),
    /// Print the task spec JSON Schema on stdout.
    #[command(after_help = "Example:\n  runner schema > schema/task.schema.json")]
    Schema,
    /// Work with reports of earlier runs.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Start a repository off: a commented task spec (tasks/NAME.yaml), `.runner/` in
    /// .gitignore, and with --workflow a GitHub workflow. Never overwrites a file.
    #[command(
        after_help = "Example:\n  runner init fix-tests --workflow && runner validate tasks/"
    )]
    Init(crate::init::InitArgs),
}

/// `runner report ...`.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Merge JUnit reports (e.g. one per shard) into one `<testsuites>` document with
    /// recomputed totals.
    #[command(after_help = "Example:\n  runner report merge shard-*/junit.xml -o junit.xml")]
    Merge {
        /// JUnit XML files to merge, in order.
        #[arg(required = true, value_name = "FILE")]
        inputs: Vec<PathBuf>,
        /// Where to write the merged report.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
    },
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
    /// Task spec files or directories of them (with --resume: at most one spec file; with -p:
    /// none).
    #[arg(required_unless_present_any = ["resume", "prompt", "continue_last"], value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Run PROMPT as a one-task spec built from the flags (--name, --cd, --tools,
    /// --allowed-tools, --append-system-prompt, --add-dir, --output-schema, ...) instead of spec
    /// files; `-` or no value: read it from stdin (at most 1 MiB). With --resume: the user
    /// message to continue with (default: none when the run stopped mid-task; a short
    /// "continue" note when it stopped after the model's answer).
    #[arg(short = 'p', long, alias = "print", value_name = "PROMPT", num_args = 0..=1, default_missing_value = stdin::STDIN_PROMPT)]
    pub prompt: Option<String>,
    /// The model API, `anthropic`, `openai`, `bedrock` or `vertex`: replaces every spec's
    /// `provider` (and drops the `openai:` settings of a spec switched away from openai). For an
    /// inline task (-p) the default is `CLAUDE_CODE_USE_BEDROCK`/`CLAUDE_CODE_USE_VERTEX` →
    /// bedrock/vertex; else from the model's name, `gpt-*`/`o1*`/`o3*`/`o4*` → openai,
    /// `claude-*` → anthropic, else from the API keys set.
    #[arg(
        long,
        value_name = "anthropic|openai|bedrock|vertex",
        value_parser = parse_provider,
        conflicts_with = "resume"
    )]
    pub provider: Option<ProviderKind>,
    /// Inline task (-p): the model used when the main one stays overloaded (a spec's
    /// `fallback_model`).
    #[arg(
        long,
        value_name = "MODEL",
        requires = "prompt",
        conflicts_with = "resume"
    )]
    pub fallback_model: Option<String>,
    /// Inline task (-p): MCP servers from a Claude Code `.mcp.json`-style FILE
    /// (`{"mcpServers": {NAME: {command, args, env}}}`), as a spec's `mcp_servers`.
    #[arg(
        long,
        value_name = "FILE",
        requires = "prompt",
        conflicts_with = "resume"
    )]
    pub mcp_config: Option<PathBuf>,
    /// Continue the newest run under --transcript-dir (as `--resume` with its transcript).
    #[arg(short = 'c', long = "continue", conflicts_with = "resume")]
    pub continue_last: bool,
    /// Inline task (-p): its name (default `inline`).
    #[arg(
        long,
        value_name = "NAME",
        requires = "prompt",
        conflicts_with = "resume"
    )]
    pub name: Option<String>,
    /// Inline task (-p): the working directory (default: the current directory).
    #[arg(
        short = 'C',
        long = "cd",
        value_name = "DIR",
        requires = "prompt",
        conflicts_with = "resume"
    )]
    pub cd: Option<PathBuf>,
    /// Inline task (-p): the tools offered, e.g. "Read,Grep,Bash" (commas or spaces; default
    /// Read, Write, Edit, Bash, Glob, Grep).
    #[arg(
        long,
        value_name = "TOOLS",
        requires = "prompt",
        conflicts_with = "resume"
    )]
    pub tools: Option<String>,
    /// Instructions that replace runner's own system prompt (the environment facts and
    /// --append-system-prompt still follow); replaces every spec's `system_prompt`.
    #[arg(long, value_name = "TEXT", conflicts_with = "resume")]
    pub system_prompt: Option<String>,
    /// --system-prompt with the text read from FILE (as Claude Code's flag).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["resume", "system_prompt"]
    )]
    pub system_prompt_file: Option<PathBuf>,
    /// Text appended to the system prompt; replaces every spec's `system_prompt_append`.
    #[arg(long, value_name = "TEXT", conflicts_with = "resume")]
    pub append_system_prompt: Option<String>,
    /// --append-system-prompt with the text read from FILE (as Claude Code's flag).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with_all = ["resume", "append_system_prompt"]
    )]
    pub append_system_prompt_file: Option<PathBuf>,
    /// Inline task (-p): an extra directory the agent may read (repeatable).
    #[arg(
        long = "add-dir",
        value_name = "DIR",
        requires = "prompt",
        conflicts_with = "resume"
    )]
    pub add_dirs: Vec<PathBuf>,
    /// Inline task (-p): the final answer must be JSON valid against the JSON Schema in FILE
    /// (structured output; see --output-file).
    #[arg(
        long,
        value_name = "FILE",
        requires = "prompt",
        conflicts_with = "resume"
    )]
    pub output_schema: Option<PathBuf>,
    /// Continue the run recorded in TRANSCRIPT instead of starting fresh (see `runner resume`).
    #[arg(long, value_name = "TRANSCRIPT")]
    pub resume: Option<PathBuf>,
    /// With --resume: use the spec file as it is now even if it changed since the run
    /// (default: the run's recorded spec).
    #[arg(long, requires = "resume")]
    pub use_current_spec: bool,
    /// What stdout carries.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Same as --output-format json.
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write the structured output (tasks with `output:`) to FILE as JSON: with one task its
    /// value, with several an object keyed by task name; `null` for a task without a value.
    #[arg(long, value_name = "FILE")]
    pub output_file: Option<PathBuf>,
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
    /// Limits that replace the spec's.
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Sandbox settings that replace the spec's.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
    /// What isolated tasks start from (replaces every spec's `git.base`): `head` (the HEAD
    /// commit; uncommitted changes to tracked files are an error) or `working-tree` (the
    /// working tree as it is, uncommitted and untracked files included).
    #[arg(long, value_name = "head|working-tree", value_parser = parse_git_base)]
    pub base: Option<crate::spec::GitBase>,
    /// Permission mode (replaces the spec's).
    #[arg(long, value_name = "MODE", value_parser = parse_mode)]
    pub permission_mode: Option<PermissionMode>,
    /// Same as --permission-mode bypassPermissions (Claude Code's spelling).
    #[arg(long, conflicts_with = "permission_mode")]
    pub dangerously_skip_permissions: bool,
    /// Allow rules added to every spec's, e.g. "Read,Bash(git diff *)" (commas or spaces outside parentheses separate rules; repeatable).
    #[arg(long, visible_alias = "allowedTools", value_name = "RULES")]
    pub allowed_tools: Vec<String>,
    /// Deny rules added to every spec's (same syntax; repeatable).
    #[arg(long, visible_alias = "disallowedTools", value_name = "RULES")]
    pub disallowed_tools: Vec<String>,
    /// Claude Code settings.json whose permissions (allow/deny/ask rules, additionalDirectories,
    /// defaultMode) and hooks are added to every spec's. Settings in the workdir are never read.
    #[arg(long, value_name = "FILE")]
    pub settings: Option<PathBuf>,
    /// Record the model's responses to a cassette FILE (one task only).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Stop starting new tasks after the first task that does not succeed; tasks not started
    /// are reported as `skipped`.
    #[arg(long)]
    pub fail_fast: bool,
    /// Cost cap in USD for the whole batch: once the finished tasks have spent this much, tasks
    /// not started yet are `skipped`. Running tasks finish under their own limits.
    #[arg(long, value_name = "USD", value_parser = parse_positive_usd)]
    pub max_total_cost_usd: Option<f64>,
    /// Run only shard I of N (1-based) of the expanded task list. Tasks are assigned by a hash
    /// of their name, so assignments survive reordering and added tasks. `auto`: the shard of
    /// a Kubernetes Indexed Job's pod (`JOB_COMPLETION_INDEX` + 1 of --shard-count).
    #[arg(long, value_name = "I/N|auto")]
    pub shard: Option<crate::batch::ShardArg>,
    /// With --shard auto: the number of shards (the Indexed Job's completions); default
    /// `$RUNNER_SHARD_COUNT`.
    #[arg(long, value_name = "N", requires = "shard", value_parser = clap::value_parser!(u32).range(1..))]
    pub shard_count: Option<u32>,
    /// Print where the turns' time went, by phase, on stderr at the end.
    #[arg(long)]
    pub timings: bool,
    /// Skip tasks whose earlier `result.json` under DIR passed with the same spec digest and
    /// base commit (e.g. a previous run's --transcript-dir).
    #[arg(long, value_name = "DIR")]
    pub skip_passed: Option<PathBuf>,
    /// Replay responses from a cassette FILE instead of calling a model.
    #[arg(long, value_name = "FILE", conflicts_with = "record")]
    pub replay: Option<PathBuf>,
    /// How replay checks requests: lenient (serve in order; tool ids must line up) or strict
    /// (each request must match the recorded one, else exit 4 with a diff). Replaces the spec's
    /// `replay_mode`.
    #[arg(long, value_name = "MODE", value_parser = parse_replay_mode)]
    pub replay_mode: Option<ReplayMode>,
}

fn parse_positive_usd(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a positive amount in USD")),
    }
}

fn parse_duration(s: &str) -> Result<SpecDuration, String> {
    SpecDuration::parse(s)
}

fn parse_replay_mode(s: &str) -> Result<ReplayMode, String> {
    ReplayMode::parse(s)
        .ok_or_else(|| format!("unknown replay mode `{s}` (expected strict or lenient)"))
}

fn parse_provider(s: &str) -> Result<ProviderKind, String> {
    match s {
        "anthropic" => Ok(ProviderKind::Anthropic),
        "openai" => Ok(ProviderKind::Openai),
        "bedrock" => Ok(ProviderKind::Bedrock),
        "vertex" => Ok(ProviderKind::Vertex),
        _ => Err(format!(
            "unknown provider `{s}` (expected anthropic, openai, bedrock or vertex; replay runs with --replay FILE)"
        )),
    }
}

fn parse_git_base(s: &str) -> Result<crate::spec::GitBase, String> {
    match s {
        "head" => Ok(crate::spec::GitBase::Head),
        "working-tree" => Ok(crate::spec::GitBase::WorkingTree),
        _ => Err(format!(
            "unknown base `{s}` (expected head or working-tree)"
        )),
    }
}

fn parse_mode(s: &str) -> Result<PermissionMode, String> {
    PermissionMode::parse(s).ok_or_else(|| {
        format!("unknown permission mode `{s}` (expected default, acceptEdits, plan, dontAsk or bypassPermissions)")
    })
}

/// `runner resume` arguments: the transcript, an optional spec, and the `exec` flags that make
/// sense for a continued run.
#[derive(Debug, Args)]
pub struct ResumeArgs {
    /// The run's transcript (`transcript.jsonl` under --transcript-dir), its session id (or a
    /// unique prefix of it), or a Claude Code session file.
    #[arg(value_name = "TRANSCRIPT|SESSION_ID")]
    pub transcript: PathBuf,
    /// Task spec: required for a Claude Code transcript; for runner's own, the file compared
    /// with the recorded spec (default: the path the run recorded).
    #[arg(value_name = "SPEC")]
    pub spec: Option<PathBuf>,
    /// Use the spec file as it is now even if it changed since the run (default: the run's
    /// recorded spec).
    #[arg(long)]
    pub use_current_spec: bool,
    /// The user message to continue with (`-` or no value: read it from stdin).
    #[arg(short = 'p', long, value_name = "TEXT", num_args = 0..=1, default_missing_value = stdin::STDIN_PROMPT)]
    pub prompt: Option<String>,
    /// Where runs are looked up by session id.
    #[arg(long, value_name = "DIR", default_value = ".runner")]
    pub transcript_dir: PathBuf,
    /// What stdout carries.
    #[arg(long, value_enum, default_value = "text")]
    pub output_format: OutputFormat,
    /// Same as --output-format json.
    #[arg(long, conflicts_with = "output_format")]
    pub json: bool,
    /// Write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Limits that replace the spec's (turns, tokens and cost count what the run already spent).
    #[command(flatten)]
    pub limits: LimitArgs,
    /// Sandbox settings that replace the spec's.
    #[command(flatten)]
    pub sandbox: SandboxArgs,
}

/// Sandbox settings given on the command line; each replaces the spec's.
#[derive(Debug, Clone, Default, Args)]
pub struct SandboxArgs {
    /// Confine the commands tasks run: `auto` (where the kernel can), `enforce` (refuse to run
    /// where it cannot, exit 2) or `off`.
    #[arg(long = "sandbox", value_name = "MODE", value_parser = parse_sandbox_mode)]
    pub mode: Option<SandboxMode>,
    /// Network of confined commands: `none` or `allow` (host lists go in the spec).
    #[arg(long, value_name = "none|allow", value_parser = parse_network)]
    pub network: Option<NetworkSetting>,
}

fn parse_sandbox_mode(s: &str) -> Result<SandboxMode, String> {
    SandboxMode::parse(s)
        .ok_or_else(|| format!("unknown sandbox mode `{s}` (expected auto, enforce or off)"))
}

fn parse_network(s: &str) -> Result<NetworkSetting, String> {
    NetworkSetting::parse(s).ok_or_else(|| {
        format!("unknown network setting `{s}` (expected none or allow; list hosts in the spec's sandbox.network)")
    })
}

/// Limits given on the command line; each replaces the spec's. A resumed run counts turns,
/// tokens and cost over the whole run (budgets continue); its timeout is for the resumed part.
#[derive(Debug, Clone, Default, Args)]
pub struct LimitArgs {
    /// Turn limit (replaces the spec's).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Cost limit in USD (replaces the spec's).
    #[arg(long, visible_alias = "max-budget-usd", value_name = "USD")]
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
}

impl ResumeArgs {
    /// The equivalent `runner exec --resume TRANSCRIPT [SPEC] ...` arguments (every other exec
    /// flag at its default).
    pub fn into_exec_args(self) -> Result<ExecArgs, clap::Error> {
        use clap::FromArgMatches;
        let cmd = ExecArgs::augment_args(clap::Command::new("exec"));
        let matches = cmd.try_get_matches_from([
            std::ffi::OsString::from("exec"),
            "--resume".into(),
            self.transcript.clone().into_os_string(),
        ])?;
        let mut e = ExecArgs::from_arg_matches(&matches)?;
        e.paths = self.spec.into_iter().collect();
        e.use_current_spec = self.use_current_spec;
        e.prompt = self.prompt;
        e.output_format = self.output_format;
        e.json = self.json;
        e.junit = self.junit;
        e.limits = self.limits;
        e.sandbox = self.sandbox;
        e.transcript_dir = self.transcript_dir;
        Ok(e)
    }
}

impl ExecArgs {
    /// What stdout carries (`--json` is `--output-format json`).
    pub fn format(&self) -> OutputFormat {
        if self.json {
            OutputFormat::Json
        } else {
            self.output_format
        }
    }

    /// The inline task of `-p PROMPT` (not with --resume, where the prompt continues the run).
    pub fn inline_task(&self) -> Option<crate::spec::inline::InlineTask> {
        if self.resume.is_some() {
            return None;
        }
        let prompt = self.prompt.clone()?;
        Some(crate::spec::inline::InlineTask {
            prompt,
            name: self.name.clone(),
            cd: self.cd.clone(),
            tools: self.tools.as_deref().map(crate::spec::inline::split_tools),
            system_prompt: self.system_prompt.clone(),
            append_system_prompt: self.append_system_prompt.clone(),
            add_dirs: self.add_dirs.clone(),
            output_schema: self.output_schema.clone(),
            provider: self.provider,
            fallback_model: self.fallback_model.clone(),
            mcp_servers: Default::default(),
        })
    }
}

/// Split a `--allowed-tools` value on commas and spaces outside parentheses:
/// `"Read,Bash(git diff *)"` → `["Read", "Bash(git diff *)"]`.
pub(crate) fn split_tool_rules(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    for c in s.chars() {
        match c {
            '(' => {
                depth += 1;
                cur.push(c);
            }
            ')' => {
                depth -= 1;
                cur.push(c);
            }
            ',' | ' ' | '\t' | '\n' if depth <= 0 => {
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_rules_outside_parens() {
        assert_eq!(
            split_tool_rules("Read,Bash(git diff *) Edit, Bash(npm run test:*)"),
            vec!["Read", "Bash(git diff *)", "Edit", "Bash(npm run test:*)"]
        );
        assert!(split_tool_rules(" , ").is_empty());
    }
}
