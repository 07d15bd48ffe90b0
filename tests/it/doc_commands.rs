//! Every command block of the docs runs: the ```` ```sh ```` and ```` ```console ```` blocks of
//! README.md and docs/src/*.md are run with bash, in order, page by page, each page in a fresh
//! git repository, with the built `runner` first on `PATH` and its model traffic sent to mock
//! servers on 127.0.0.1 (Anthropic and OpenAI). A ```` ```console ```` block's output is
//! compared with what it shows. Blocks that cannot run here carry a `skip` directive with the
//! reason and are listed as skipped. The convention and the directives: `support::doc_blocks`
//! and docs/src/architecture.md ("Docs that run").
//!
//! With `RUNNER_DOC_COMMANDS_REPORT=FILE` the list of what ran and what was skipped (and why)
//! is written to FILE; `.ci/run` prints it.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use crate::support::doc_blocks::{self, Block, Directive};
use crate::support::*;

/// Longest a block's command may take.
const COMMAND_TIMEOUT_SECS: &str = "120";

/// What a run of the pages found.
#[derive(Default)]
struct Outcome {
    /// `FILE:LINE` of each block run.
    ran: Vec<String>,
    /// `FILE:LINE: reason` of each block skipped.
    skipped: Vec<String>,
    /// What went wrong, one entry per block.
    failures: Vec<String>,
}

/// Where the blocks run: the binary's directory, a home directory, the mock servers.
struct Env {
    bin: tempfile::TempDir,
    home: tempfile::TempDir,
    anthropic: MockAnthropic,
    openai: MockOpenai,
}

/// Short answers after the first turn: enough for a task whose failing checks are fed back.
const ANSWERS: usize = 6;

/// A conversation the mocks hold with every task: a `Glob` for the Markdown files, then short
/// answers. The tool turn first, so a task stopped at `max_turns: 1` has something to resume.
fn conversation() -> Vec<MockTurn> {
    let mut turns = vec![tool_turn("toolu_doc_1", "Glob", json!({"pattern": "*.md"}))];
    turns.extend((0..ANSWERS).map(|_| text_turn("Done.")));
    turns
}

fn oa_conversation() -> Vec<MockTurn> {
    let mut turns = vec![
        OaResp::new()
            .tool_call("call_doc_1", "Glob", json!({"pattern": "*.md"}))
            .turn(),
    ];
    turns.extend((0..ANSWERS).map(|_| oa_text_turn("Done.")));
    turns
}

impl Env {
    fn new() -> Env {
        let bin = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(runner_binary(), bin.path().join("runner")).unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".gitconfig"),
            "[user]\n\tname = Doc Reader\n\temail = doc-reader@example.invalid\n[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n",
        )
        .unwrap();
        Env {
            bin,
            home,
            anthropic: MockAnthropic::start_each(conversation(), 500),
            openai: MockOpenai::start_each(oa_conversation(), 100),
        }
    }

    /// bash running `script` in `dir` with `set -eo pipefail`, in this environment (nothing of
    /// the caller's but `PATH`), its model traffic for Anthropic sent to `anthropic_url`.
    fn bash(&self, dir: &Path, script: &str, anthropic_url: &str) -> Command {
        let mut cmd = Command::new("timeout");
        cmd.args([COMMAND_TIMEOUT_SECS, "bash", "-c"])
            .arg(format!("set -eo pipefail\n{script}"))
            .current_dir(dir)
            .env_clear()
            .env(
                "PATH",
                format!(
                    "{}:{}",
                    self.bin.path().display(),
                    std::env::var("PATH").unwrap_or_default()
                ),
            )
            .env("HOME", self.home.path())
            .env("TMPDIR", std::env::temp_dir())
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("ANTHROPIC_API_KEY", DUMMY_API_KEY)
            .env("ANTHROPIC_BASE_URL", anthropic_url)
            .env("OPENAI_API_KEY", DUMMY_OPENAI_KEY)
            .env("OPENAI_BASE_URL", self.openai.base_url())
            .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", TEST_STREAM_IDLE_TIMEOUT_MS)
            .env("REPO", env!("CARGO_MANIFEST_DIR"))
            .stdin(Stdio::null());
        if let Some(abi) = std::env::var_os("RUNNER_TEST_LANDLOCK_ABI") {
            cmd.env("RUNNER_TEST_LANDLOCK_ABI", abi);
        }
        cmd
    }

    /// Run `script` in `dir`: (exit code, stdout and stderr as one text).
    fn run(&self, dir: &Path, script: &str, anthropic_url: &str) -> (i32, String) {
        let out = self
            .bash(dir, &format!("exec 2>&1\n{script}"), anthropic_url)
            .output()
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    }
}

/// The last `n` lines of `text`, indented.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..]
        .iter()
        .map(|l| format!("    {l}\n"))
        .collect()
}

/// Run the blocks of one page (`name` for messages) in a fresh repository.
fn run_page(env: &Env, name: &str, markdown: &str, outcome: &mut Outcome) {
    let (blocks, problems) = doc_blocks::parse(markdown);
    outcome
        .failures
        .extend(problems.into_iter().map(|p| format!("{name}: {p}")));
    let repo = TestRepo::new();
    for block in &blocks {
        let at = format!("{name}:{}", block.line);
        if let Err(e) = run_block(env, repo.path(), block, outcome, &at) {
            outcome.failures.push(format!("{at}: {e}"));
        }
    }
}

fn run_block(
    env: &Env,
    dir: &Path,
    block: &Block,
    outcome: &mut Outcome,
    at: &str,
) -> Result<(), String> {
    for d in &block.directives {
        if let Directive::File(path) = d {
            let p = dir.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, &block.body).unwrap();
        }
    }
    if !block.is_command() {
        return Ok(());
    }
    if let Some(reason) = block.skip() {
        outcome.skipped.push(format!("{at}: {reason}"));
        return Ok(());
    }
    // A block that answers with structured output gets a mock of its own.
    let structured = block.directives.iter().find_map(|d| match d {
        Directive::Structured(v) => Some(v.clone()),
        _ => None,
    });
    let own_mock = structured.map(|v| {
        let input: serde_json::Value = serde_json::from_str(&v)
            .unwrap_or_else(|e| panic!("{at}: `structured` is not JSON: {e}"));
        MockAnthropic::start(vec![tool_turn("toolu_doc_s", "StructuredOutput", input)])
    });
    let url = own_mock
        .as_ref()
        .map_or_else(|| env.anthropic.url(), |m| m.url());
    for d in &block.directives {
        if let Directive::Setup(script) = d {
            let (code, out) = env.run(dir, script, &url);
            if code != 0 {
                return Err(format!("the setup exited {code}:\n{}", tail(&out, 30)));
            }
        }
    }
    let expected = block.exit();
    let mut problems = Vec::new();
    if block.lang == "console" {
        let commands = doc_blocks::console_commands(&block.body);
        if commands.is_empty() {
            return Err("a console block without a `$ ` command".into());
        }
        for (cmd, shown) in commands {
            let (code, out) = env.run(dir, &cmd, &url);
            if code != expected {
                problems.push(format!(
                    "`{cmd}` exited {code}, expected {expected}:\n{}",
                    tail(&out, 30)
                ));
            } else if !doc_blocks::output_matches(&shown, &out) {
                problems.push(format!(
                    "`{cmd}` printed\n{}\n  where the docs show\n{}",
                    tail(&out, 40),
                    tail(&shown, 40)
                ));
            }
        }
    } else {
        let (code, out) = env.run(dir, &block.body, &url);
        if code != expected {
            problems.push(format!(
                "the block exited {code}, expected {expected}:\n{}",
                tail(&out, 30)
            ));
        }
    }
    if let Some(m) = own_mock {
        problems.extend(m.take_violations().iter().map(ToString::to_string));
    }
    outcome.ran.push(at.to_string());
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("\n"))
    }
}

/// README.md and docs/src/*.md, as (name relative to the checkout, path).
fn pages() -> Vec<(String, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![("README.md".to_string(), root.join("README.md"))];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    pages.extend(docs.into_iter().map(|p| {
        let name = p.strip_prefix(root).unwrap().display().to_string();
        (name, p)
    }));
    pages
}

#[test]
fn every_command_block_in_the_docs_runs() {
    let env = Env::new();
    let mut outcome = Outcome::default();
    for (name, path) in pages() {
        let text = std::fs::read_to_string(&path).unwrap();
        run_page(&env, &name, &text, &mut outcome);
    }
    let mut report = format!(
        "doc commands: {} blocks run, {} skipped\n",
        outcome.ran.len(),
        outcome.skipped.len()
    );
    for s in &outcome.skipped {
        report.push_str(&format!("  skipped {s}\n"));
    }
    eprint!("{report}");
    if let Some(file) = std::env::var_os("RUNNER_DOC_COMMANDS_REPORT") {
        std::fs::write(file, &report).unwrap();
    }
    outcome.failures.extend(
        env.anthropic
            .take_violations()
            .iter()
            .chain(env.openai.take_violations().iter())
            .map(|v| format!("mock: {v}")),
    );
    assert!(
        outcome.failures.is_empty(),
        "{} doc block(s) disagree with the binary:\n{}",
        outcome.failures.len(),
        outcome.failures.join("\n")
    );
    assert!(
        outcome.ran.len() >= 12,
        "only {} command blocks ran: is the convention still followed?",
        outcome.ran.len()
    );
}

#[test]
fn a_block_that_disagrees_with_the_binary_fails() {
    let env = Env::new();
    let mut outcome = Outcome::default();
    let page = "```console\n$ runner --version\nrunner 0.0.0-not-this-one\n```\n\n<!-- doc-test: skip shown only -->\n```sh\nrunner exec nothing.yaml\n```\n\n```sh\nrunner exec missing.yaml\n```\n\n<!-- doc-test: exit 2 -->\n```sh\nrunner validate missing.yaml\n```\n";
    run_page(&env, "page.md", page, &mut outcome);
    assert_eq!(outcome.ran, ["page.md:1", "page.md:11", "page.md:16"]);
    assert_eq!(outcome.skipped, ["page.md:7: shown only"]);
    assert_eq!(outcome.failures.len(), 2, "{:?}", outcome.failures);
    assert!(
        outcome.failures[0].starts_with("page.md:1: `runner --version` printed"),
        "{}",
        outcome.failures[0]
    );
    assert!(
        outcome.failures[1].starts_with("page.md:11: the block exited 2, expected 0"),
        "{}",
        outcome.failures[1]
    );
}
