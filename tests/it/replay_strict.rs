//! Record a live run (against the mock), then replay it strictly and leniently, in another
//! workdir, with and without changes to the prompt, the system prompt (the spec's own and its
//! append) and the tools.

use std::path::Path;

use crate::support::*;
use serde_json::{Value, json};

fn spec_yaml(prompt: &str, append: &str, tools: &str) -> String {
    format!(
        "name: regress\nprompt: {prompt:?}\nmodel: claude-sonnet-4-5\nsystem_prompt_append: {append:?}\ntools: {tools}\n"
    )
}

/// Record a Read round trip in a fresh repo; returns the cassette path (outside the repo).
fn record(dir: &Path) -> std::path::PathBuf {
    record_spec(
        dir,
        &spec_yaml("read notes.txt", "Be brief.", "[Read, Glob]"),
    )
}

/// [`record`] with the spec `yaml`.
fn record_spec(dir: &Path, yaml: &str) -> std::path::PathBuf {
    let repo = TestRepo::new();
    let file = repo.write("notes.txt", "alpha\n");
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Read", json!({"file_path": file}))
            .turn(),
        text_turn("It says alpha."),
    ]);
    let spec = write_spec(repo.path(), yaml);
    let cassette = dir.join("regress.cassette.jsonl");
    let out = exec_in(&mock, &repo)
        .arg("--record")
        .arg(&cassette)
        .arg(&spec)
        .run();
    out.expect_code(0);
    mock.assert_clean();
    cassette
}

/// Replay `cassette` in a new repo with `spec`; returns (exit code, result object).
fn replay(cassette: &Path, spec: &str, mode: &str) -> (Option<i32>, Value) {
    let repo = TestRepo::new();
    repo.write("notes.txt", "alpha\n");
    let spec = write_spec(repo.path(), spec);
    let out = Runner::new()
        .env_remove("ANTHROPIC_API_KEY")
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json", "--replay"])
        .arg(cassette)
        .args(["--replay-mode", mode])
        .arg(&spec)
        .run();
    let r = out.json().pop().unwrap_or(Value::Null);
    (out.code, r)
}

#[test]
fn strict_replay_passes_unchanged_and_fails_with_a_diff_on_change() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = record(dir.path());
    let same = spec_yaml("read notes.txt", "Be brief.", "[Read, Glob]");

    // Unchanged, in another workdir on "another day": passes.
    let (code, r) = replay(&cassette, &same, "strict");
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["result"], "It says alpha.");

    // Prompt changed: exit 4 with the changed message shown.
    let (code, r) = replay(
        &cassette,
        &spec_yaml("read notes.txt twice", "Be brief.", "[Read, Glob]"),
        "strict",
    );
    assert_eq!(code, Some(4), "{r}");
    assert_eq!(r["runner_outcome"], "api_error");
    let err = r["errors"][0].as_str().unwrap();
    assert!(
        err.contains("strict replay: request 1 does not match"),
        "{err}"
    );
    assert!(err.contains("messages[0] (user) changed"), "{err}");
    assert!(err.contains("\"text: read notes.txt twice\""), "{err}");
    assert!(err.contains("re-record"), "{err}");

    // System prompt append and tools changed.
    let (code, r) = replay(
        &cassette,
        &spec_yaml("read notes.txt", "Be thorough.", "[Read]"),
        "strict",
    );
    assert_eq!(code, Some(4), "{r}");
    let err = r["errors"][0].as_str().unwrap();
    assert!(err.contains("system_prompt_append changed"), "{err}");
    assert!(err.contains("tools removed: Glob"), "{err}");

    // A custom system prompt where the recording had runner's own: a departure too.
    let (code, r) = replay(
        &cassette,
        &format!("{same}system_prompt: You only read files.\n"),
        "strict",
    );
    assert_eq!(code, Some(4), "{r}");
    let err = r["errors"][0].as_str().unwrap();
    assert!(err.contains("system_prompt changed"), "{err}");
    assert!(err.contains("\"You only read files.\""), "{err}");

    // Lenient replay of the changed prompt still serves the recording.
    let (code, r) = replay(
        &cassette,
        &spec_yaml("read notes.txt twice", "Be brief.", "[Read, Glob]"),
        "lenient",
    );
    assert_eq!(code, Some(0), "{r}");
}

#[test]
fn a_changed_custom_system_prompt_is_a_departure() {
    let dir = tempfile::tempdir().unwrap();
    let custom = |text: &str| {
        format!(
            "{}system_prompt: {text:?}\n",
            spec_yaml("read notes.txt", "Be brief.", "[Read, Glob]")
        )
    };
    let cassette = record_spec(dir.path(), &custom("You only read files."));
    let (code, r) = replay(&cassette, &custom("You only read files."), "strict");
    assert_eq!(code, Some(0), "{r}");
    let (code, r) = replay(&cassette, &custom("You read and edit files."), "strict");
    assert_eq!(code, Some(4), "{r}");
    let err = r["errors"][0].as_str().unwrap();
    assert!(err.contains("system_prompt changed"), "{err}");
    assert!(err.contains("\"You read and edit files.\""), "{err}");
    assert!(!err.contains("system_prompt_append changed"), "{err}");
    // Without the custom prompt (runner's own again): also a departure.
    let (code, r) = replay(
        &cassette,
        &spec_yaml("read notes.txt", "Be brief.", "[Read, Glob]"),
        "strict",
    );
    assert_eq!(code, Some(4), "{r}");
}

#[test]
fn replay_mode_from_the_spec() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = record(dir.path());
    let repo = TestRepo::new();
    std::fs::copy(&cassette, repo.path().join("c.jsonl")).unwrap();
    let spec = write_spec(
        repo.path(),
        &format!(
            "{}provider: replay\ncassette: c.jsonl\nreplay_mode: strict\n",
            spec_yaml("a different prompt", "Be brief.", "[Read, Glob]")
        ),
    );
    let out = Runner::new()
        .current_dir(repo.path())
        .args(["exec"])
        .arg(&spec)
        .run();
    let all = format!("{}{}", out.stdout, out.stderr);
    assert_eq!(out.code, Some(4), "{all}");
    assert!(all.contains("messages[0] (user) changed"), "{all}");
}

/// `--record` works for `provider: openai` too; the cassette replays strictly offline.
#[test]
fn openai_recording_replays_strictly() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("oa.jsonl");
    let repo = TestRepo::new();
    let file = repo.write("notes.txt", "alpha\n");
    let mock = MockOpenai::start(vec![
        OaResp::new()
            .tool_call("call_1", "Read", json!({"file_path": file}))
            .turn(),
        oa_text_turn("It says alpha."),
    ]);
    let spec = format!(
        "{}provider: openai\n",
        spec_yaml("read notes.txt", "Be brief.", "[Read, Glob]")
    );
    let spec_path = write_spec(repo.path(), &spec);
    let out = exec_in(&mock, &repo)
        .arg("--record")
        .arg(&cassette)
        .arg(&spec_path)
        .run();
    out.expect_code(0);
    mock.assert_clean();
    let text = std::fs::read_to_string(&cassette).unwrap();
    assert!(!text.contains(DUMMY_OPENAI_KEY));
    assert!(text.contains("${WORKDIR}/notes.txt"), "{text}");
    let (code, r) = replay(&cassette, &spec, "strict");
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["result"], "It says alpha.");
}
