//! End-to-end: "what it did" — the files a task changed (with lines added and removed), the
//! commands it ran (with exit codes and durations) and the calls denied, in the stream-json
//! result, `result.json` and the GitHub step summary.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::*;

/// The `result.json` files under `dir` (one per task).
fn result_jsons(dir: &Path) -> Vec<(PathBuf, Value)> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path().join("result.json");
        if p.is_file() {
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            found.push((p, v));
        }
    }
    found
}

#[test]
fn a_task_that_edits_two_files_and_runs_two_commands_lists_them() {
    let repo = TestRepo::new();
    repo.write("a.txt", "alpha\nbeta\ngamma\n");
    repo.write("untouched.txt", "same\n");
    repo.commit_all("base");
    let work = repo.path();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_read", "Read", json!({"file_path": work.join("a.txt")})),
        Resp::new()
            .tool_use(
                "toolu_edit",
                "Edit",
                json!({"file_path": work.join("a.txt"), "old_string": "beta\n", "new_string": "BETA\nbeta2\n"}),
            )
            .tool_use(
                "toolu_write",
                "Write",
                json!({"file_path": work.join("new.txt"), "content": "one\ntwo\nthree\n"}),
            )
            .turn(),
        tool_turn(
            "toolu_echo",
            "Bash",
            json!({"command": "echo hello && sleep 0.2"}),
        ),
        Resp::new()
            .tool_use("toolu_ls", "Bash", json!({"command": "ls no-such-file"}))
            .turn(),
        Resp::new()
            .tool_use(
                "toolu_curl",
                "Bash",
                json!({"command": "curl -s http://127.0.0.1:9/"}),
            )
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let summary = out.path().join("summary.md");
    let spec = write_spec(
        repo.path(),
        "name: footprint\nprompt: change two files\nmodel: claude-sonnet-4-5\n\
         permissions:\n  mode: acceptEdits\n  allow: [\"Bash(echo *)\", \"Bash(sleep *)\", \"Bash(ls *)\"]\n",
    );
    let run = exec(&mock, &repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .json()
        .arg(&spec)
        .run();
    run.expect_code(0);
    let r = run.result();

    // The files, with their line counts (the spec file itself is new too, and listed).
    let files = r["runner_git"]["files"].as_array().unwrap();
    let file = |p: &str| {
        files
            .iter()
            .find(|f| f["path"] == p)
            .unwrap_or_else(|| panic!("{p} not in {files:?}"))
    };
    assert_eq!(
        (
            file("a.txt")["status"].as_str(),
            file("a.txt")["insertions"].as_u64(),
            file("a.txt")["deletions"].as_u64()
        ),
        (Some("modified"), Some(2), Some(1))
    );
    assert_eq!(
        (
            file("new.txt")["status"].as_str(),
            file("new.txt")["insertions"].as_u64(),
            file("new.txt")["deletions"].as_u64()
        ),
        (Some("added"), Some(3), Some(0))
    );
    assert!(!files.iter().any(|f| f["path"] == "untouched.txt"));

    // The commands that ran, in order, with exit codes and durations; the denied one did not run.
    let commands = r["runner_commands"].as_array().unwrap();
    assert_eq!(commands.len(), 2, "{commands:?}");
    assert_eq!(commands[0]["command"], "echo hello && sleep 0.2");
    assert_eq!(commands[0]["exit_code"], 0);
    let ms = commands[0]["duration_ms"].as_u64().unwrap();
    assert!((200..10_000).contains(&ms), "{ms}");
    assert_eq!(commands[1]["command"], "ls no-such-file");
    assert_eq!(commands[1]["exit_code"], 2);
    let denials = r["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1);
    assert_eq!(denials[0]["tool_name"], "Bash");

    // result.json: the same lists, and the denial with its reason.
    let results = result_jsons(&out.transcripts());
    assert_eq!(results.len(), 1);
    let (path, rf) = &results[0];
    assert_eq!(rf["files"], r["runner_git"]["files"], "{}", path.display());
    assert_eq!(rf["commands"], r["runner_commands"]);
    assert_eq!(rf["denials"][0]["tool"], "Bash");
    assert!(
        rf["denials"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("curl"),
        "{rf}"
    );
    assert_eq!(rf["timing"]["turns"], 6);

    // The step summary: the task's section has the files, the commands and the denial.
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(md.contains("**Files changed**"), "{md}");
    assert!(md.contains("**Commands run**"), "{md}");
    assert!(md.contains("| `a.txt` | modified | 2 | 1 |"), "{md}");
    assert!(md.contains("| `new.txt` | added | 3 | 0 |"), "{md}");
    assert!(md.contains("| `echo hello && sleep 0.2` | 0 | "), "{md}");
    assert!(md.contains("| `ls no-such-file` | 2 | "), "{md}");
    let denied = md.split("**Denied calls**").nth(1).expect("denied calls");
    assert!(denied.contains("curl -s http://127.0.0.1:9/"), "{md}");
    assert!(!md.contains("untouched.txt"));
    mock.assert_clean();
}

#[test]
fn a_task_that_did_nothing_has_no_footprint() {
    let repo = TestRepo::new();
    repo.write("a.txt", "alpha\n");
    repo.commit_all("base");
    let spec_dir = tempfile::tempdir().unwrap();
    let spec = write_spec(
        spec_dir.path(),
        &format!(
            "name: idle\nprompt: hi\nmodel: claude-sonnet-4-5\nworkdir: {:?}\n",
            repo.path().display().to_string()
        ),
    );
    let mock = MockAnthropic::start(vec![text_turn("nothing to do")]);
    let out = OutDir::new();
    let summary = out.path().join("summary.md");
    let run = exec(&mock, &repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .json()
        .arg(&spec)
        .run();
    run.expect_code(0);
    let r = run.result();
    assert!(r.get("runner_commands").is_none(), "{r}");
    assert_eq!(r["runner_git"]["changed"], false, "{r}");
    assert!(r["runner_git"].get("files").is_none(), "{r}");
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(!md.contains("**Files changed**"), "{md}");
    assert!(!md.contains("**Commands run**"), "{md}");
    let (_, rf) = &result_jsons(&out.transcripts())[0];
    assert_eq!(rf["files"], json!([]));
    assert_eq!(rf["commands"], json!([]));
    assert_eq!(rf["denials"], json!([]));
}
