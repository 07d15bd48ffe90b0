//! The offline example in tasks/examples/: it replays (no key, no network) and its cassette
//! can be re-recorded against the mock server.
//!
//! Re-record with: `cargo test --test it -- --ignored record_example_cassette`

use std::path::{Path, PathBuf};

use crate::support::*;
use serde_json::json;

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tasks/examples")
}

#[test]
fn example_replays_offline_with_real_tools() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = runner_std_cmd()
        .env_remove("ANTHROPIC_API_KEY")
        .args(["exec", "--output-format", "json", "--transcript-dir"])
        .arg(out_dir.path())
        .arg(examples_dir().join("hello-replay.yaml"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    let lines = json_lines(&out.stdout);
    assert_eq!(lines.len(), 1);
    let r = &lines[0];
    assert_eq!(r["subtype"], json!("success"));
    assert_eq!(r["num_turns"], json!(4));
    assert!(r["result"].as_str().unwrap().contains("TODO"), "{r}");
    // A replay spends nothing: no cost, in the total or per model.
    assert_eq!(r["total_cost_usd"], json!(null), "{r}");
    assert_eq!(
        r["modelUsage"]["claude-sonnet-4-5"]["costUSD"],
        json!(null),
        "{r}"
    );
    // The tools really ran: the transcript holds real tool results from ./sample.
    let transcript = r["runner_transcript_path"].as_str().unwrap();
    let records = read_json_lines(Path::new(transcript));
    let results: Vec<String> = records
        .iter()
        .filter(|rec| rec["type"] == "user")
        .filter_map(|rec| {
            rec["message"]["content"][0]["content"]
                .as_str()
                .map(String::from)
        })
        .collect();
    assert!(
        results.iter().any(|t| t.contains("pub fn add")),
        "Read result missing: {results:?}"
    );
    assert!(
        results.iter().any(|t| t.contains("TODO: handle overflow")),
        "Grep result missing"
    );
    assert!(
        results.iter().any(|t| t.contains("lib.rs")),
        "wc/Glob result missing"
    );
    assert!(
        records
            .iter()
            .all(|rec| rec["message"]["content"][0]["is_error"] != json!(true)),
        "no tool call failed"
    );
}

#[test]
fn exhausted_cassette_is_a_clear_error() {
    let repo = TestRepo::new();
    // A prompt that the recorded conversation still fits, but a turn limit of... none: we
    // truncate the cassette to its first two exchanges instead.
    let src = std::fs::read_to_string(examples_dir().join("hello-replay.cassette.jsonl")).unwrap();
    let short: Vec<&str> = src.lines().take(3).collect();
    std::fs::write(repo.path().join("c.jsonl"), short.join("\n") + "\n").unwrap();
    std::fs::create_dir_all(repo.path().join("sample")).unwrap();
    copy_dir(&examples_dir().join("sample"), &repo.path().join("sample"));
    let spec = std::fs::read_to_string(examples_dir().join("hello-replay.yaml"))
        .unwrap()
        .replace("hello-replay.cassette.jsonl", "c.jsonl");
    let spec = write_spec(repo.path(), &spec);
    let out = runner_std_cmd().args(["exec"]).arg(&spec).output().unwrap();
    assert_eq!(out.status.code(), Some(4));
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        text.contains("is exhausted: it holds 2 recorded responses"),
        "{text}"
    );
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Regenerates tasks/examples/hello-replay.cassette.jsonl from a scripted mock conversation.
#[test]
#[ignore = "regenerates the committed example cassette"]
fn record_example_cassette() {
    let work = std::fs::canonicalize(examples_dir().join("sample")).unwrap();
    let w = work.display().to_string();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .model("claude-sonnet-4-5-20250929")
            .text("I'll start by listing the project's files.")
            .tool_use("toolu_01Glob", "Glob", json!({"pattern": "**/*", "path": w}))
            .usage(1850, 60)
            .turn(),
        Resp::new()
            .model("claude-sonnet-4-5-20250929")
            .text("Two files. I'll read the source and search for TODO comments at the same time.")
            .tool_use("toolu_02Read", "Read", json!({"file_path": format!("{w}/src/lib.rs")}))
            .tool_use(
                "toolu_03Grep",
                "Grep",
                json!({"pattern": "TODO", "path": w, "output_mode": "content", "-n": true}),
            )
            .usage(2100, 120)
            .turn(),
        Resp::new()
            .model("claude-sonnet-4-5-20250929")
            .tool_use(
                "toolu_04Bash",
                "Bash",
                json!({"command": "wc -l README.md src/lib.rs", "description": "Count lines per file"}),
            )
            .usage(2450, 55)
            .turn(),
        Resp::new()
            .model("claude-sonnet-4-5-20250929")
            .text(
                "Summary: `sample` is a tiny Rust library with two files, README.md and \
                 src/lib.rs. The library defines `add` and `double` (which calls `add`). There \
                 is one TODO, at src/lib.rs line 6: overflow should be handled explicitly \
                 instead of relying on debug-build panics. Together the files have about a \
                 dozen lines.",
            )
            .usage(2600, 90)
            .turn(),
    ]);
    let cassette = examples_dir().join("hello-replay.cassette.jsonl");
    let spec_src = std::fs::read_to_string(examples_dir().join("hello-replay.yaml")).unwrap();
    let live = spec_src
        .replace("provider: replay\n", "provider: anthropic\n")
        .replace("cassette: hello-replay.cassette.jsonl\n", "");
    let tmp_spec = examples_dir().join(".record.yaml");
    std::fs::write(&tmp_spec, live).unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let out = Runner::against(&mock)
        .args(["exec", "--transcript-dir"])
        .arg(out_dir.path())
        .arg("--record")
        .arg(&cassette)
        .arg(&tmp_spec)
        .run();
    std::fs::remove_file(&tmp_spec).unwrap();
    out.expect_code(0);
    mock.assert_clean();
}
