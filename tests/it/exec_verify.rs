//! Verify checks and attempts through the real binary.

use crate::support::*;
use serde_json::json;

#[test]
fn failing_check_is_fed_back_and_the_second_attempt_passes() {
    let mock = MockAnthropic::start(vec![
        text_turn("I think it's done."),
        tool_turn("toolu_1", "Bash", json!({"command": "touch done.txt"})),
        text_turn("Created done.txt."),
    ]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: v1\nprompt: create done.txt\npermissions:\n  allow: [\"Bash(touch:*)\"]\nverify:\n  - name: done-exists\n    run: test -f done.txt && echo present\nattempts: 2\n",
    );
    let junit = repo.path().join("junit.xml");
    let out = exec_in(&mock, &repo).json().junit(&junit).arg(&spec).run();
    out.expect_code(0);
    let r = &out.json()[0];
    assert_eq!(r["runner_outcome"], json!("success"));
    assert_eq!(r["num_turns"], json!(3));
    assert_eq!(r["runner_checks"][0]["passed"], json!(true));
    assert_eq!(r["runner_checks"][0]["attempt"], json!(2));
    // The second request carried the failing check's report.
    let fb = mock.request(1).body["messages"].to_string();
    assert!(
        fb.contains("done-exists") && fb.contains("attempt 1 of 2"),
        "{fb}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains(r#"name="done-exists""#), "{xml}");
    assert!(xml.contains(r#"tests="2""#), "{xml}");
    mock.assert_clean();
}

#[test]
fn check_failing_after_last_attempt_is_checks_failed_exit_1() {
    let mock = MockAnthropic::start(vec![text_turn("Done.")]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: v2\nprompt: do it\nverify:\n  - run: echo broken >&2; exit 7\n",
    );
    let junit = repo.path().join("junit.xml");
    let out = exec_in(&mock, &repo).json().junit(&junit).arg(&spec).run();
    assert_eq!(out.code, Some(1));
    let r = &out.json()[0];
    assert_eq!(r["runner_outcome"], json!("checks_failed"));
    assert_eq!(r["subtype"], json!("error_during_execution"));
    assert!(r["errors"][0].as_str().unwrap().contains("exited 7"), "{r}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains(r#"type="check_failed""#) && xml.contains("broken"),
        "{xml}"
    );
    mock.assert_clean();
}

#[test]
fn checks_run_report_only_when_a_limit_ends_the_task() {
    let mock = MockAnthropic::start(vec![tool_turn("toolu_1", "Glob", json!({"pattern": "*"}))]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: v3\nprompt: loop\nlimits:\n  max_turns: 1\nverify:\n  - name: ok\n    run: \"true\"\n",
    );
    let out = exec_in(&mock, &repo).json().arg(&spec).run();
    assert_eq!(out.code, Some(3));
    let r = &out.json()[0];
    assert_eq!(r["runner_outcome"], json!("max_turns"));
    assert_eq!(r["runner_checks"][0]["report_only"], json!(true));
    assert_eq!(r["runner_checks"][0]["passed"], json!(true));
    mock.assert_clean();
}
