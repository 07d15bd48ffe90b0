//! End-to-end: turn limits (`limits.max_turns`, `--max-turns`) through the real binary.

use crate::support::*;
use serde_json::json;

fn touch(id: &str, file: &str) -> MockTurn {
    tool_turn(id, "Bash", json!({"command": format!("touch {file}")}))
}

fn spec(limits: &str) -> String {
    format!(
        "name: looper\nprompt: keep going\nmodel: claude-sonnet-4-5\npermissions:\n  allow: [\"Bash(touch:*)\"]\n{limits}"
    )
}

#[test]
fn max_turns_ends_the_run_with_exit_3_after_running_the_last_turns_tools() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![touch("toolu_1", "turn-1.txt")]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec("limits:\n  max_turns: 1\n"));
    let run = exec(&mock, &repo, &out)
        .json()
        .junit(out.junit())
        .arg(&spec)
        .run();
    run.expect_code(3);
    assert!(repo.exists("turn-1.txt"), "the first turn's tool ran");
    assert_eq!(mock.requests().len(), 1, "no request for a second turn");
    let r = run.result();
    assert_eq!(r["subtype"], "error_max_turns");
    assert_eq!(r["is_error"], true);
    assert_eq!(r["runner_outcome"], "max_turns");
    assert_eq!(r["terminal_reason"], "max_turns");
    assert_eq!(r["num_turns"], 1);
    assert_eq!(r["stop_reason"], "tool_use");
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap()
            .contains("maximum number of turns (1)"),
        "{r}"
    );
    // The transcript ends with the tool result of the last turn (a valid prefix to resume).
    let t = transcript_of(&r);
    assert_chain(&t);
    let last_user = records_of(&t, "user").into_iter().last().unwrap();
    assert_eq!(last_user["message"]["content"][0]["type"], "tool_result");
    let xml = std::fs::read_to_string(out.junit()).unwrap();
    assert!(xml.contains("<failure type=\"max_turns\""), "{xml}");
    mock.assert_clean();
}

#[test]
fn cli_max_turns_replaces_the_specs() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        touch("toolu_1", "turn-1.txt"),
        touch("toolu_2", "turn-2.txt"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec("limits:\n  max_turns: 1\n"));
    let run = exec(&mock, &repo, &out)
        .args(["--max-turns", "2"])
        .json()
        .arg(&spec)
        .run();
    run.expect_code(3);
    assert!(repo.exists("turn-1.txt") && repo.exists("turn-2.txt"));
    let r = run.result();
    assert_eq!(r["num_turns"], 2);
    assert_eq!(r["subtype"], "error_max_turns");
    let t = transcript_of(&r);
    assert_eq!(
        t[0]["spec"]["limits"]["max_turns"], 2,
        "resolved spec records the override"
    );
    mock.assert_clean();

    // And a larger CLI limit lets a spec with a smaller one finish.
    let mock = MockAnthropic::start(vec![touch("toolu_1", "again.txt"), text_turn("done")]);
    let run = exec(&mock, &repo, &out)
        .args(["--max-turns", "5"])
        .arg(&spec)
        .run();
    run.expect_code(0);
    assert_eq!(run.stdout, "done\n");
    mock.assert_clean();
}

#[test]
fn text_output_of_max_turns_names_the_limit() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![touch("toolu_1", "t.txt")]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out)
        .args(["--max-turns", "1"])
        .arg(&spec)
        .run();
    run.expect_code(3);
    assert!(
        run.stdout.contains("maximum number of turns (1)"),
        "{}",
        run.stdout
    );
    mock.assert_clean();
}
