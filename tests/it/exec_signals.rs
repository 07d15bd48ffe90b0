//! End-to-end: the wall-clock limit and SIGINT/SIGTERM through the real binary.

use std::time::Duration;

use crate::support::*;

fn stalled() -> MockTurn {
    MockTurn::Stall {
        events: Resp::new().text("slow answer").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }
}

#[test]
fn timeout_limit_ends_the_task_with_exit_3() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![stalled()]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: slow\nprompt: hi\nlimits:\n  timeout: 1s\n",
    );
    let run = exec_env(
        &mock,
        &repo,
        &out,
        &["--output-format", "json", spec.to_str().unwrap()],
        &[("RUNNER_STREAM_IDLE_TIMEOUT_MS", "120000")],
    );
    run.expect_code(3);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "timeout");
    assert_eq!(r["terminal_reason"], "budget_exhausted");
    mock.assert_clean();
}

fn interrupt_with(signal: &str, code: i32) {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![stalled()]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: sig\nprompt: hi\n");
    let child = spawn_exec(&mock, &repo, &out, &spec);
    assert!(
        mock.wait_for_requests(1, Duration::from_secs(30)),
        "the request never arrived"
    );
    // Give the stream a moment to deliver its first events (not a timing assertion).
    std::thread::sleep(Duration::from_millis(200));
    let st = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(code), "{stderr}");
    let r = json_lines(&o.stdout).remove(0);
    assert_eq!(r["runner_outcome"], "interrupted");
    assert_eq!(r["runner_exit_code"], code);
    let xml = std::fs::read_to_string(out.junit()).unwrap();
    assert!(xml.contains("<error type=\"interrupted\""), "{xml}");
    let t = transcript_of(&r);
    assert_eq!(t.last().unwrap()["subtype"], "runner_result");
    mock.assert_clean();
}

#[test]
fn sigint_writes_reports_and_exits_130() {
    interrupt_with("-INT", 130);
}

#[test]
fn sigterm_writes_reports_and_exits_143() {
    interrupt_with("-TERM", 143);
}

#[test]
fn second_signal_cuts_reports_short_but_writes_junit() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![tool_turn(
        "toolu_1",
        "Bash",
        serde_json::json!({"command": "touch tool.marker && sleep 30"}),
    )]);
    let out = OutDir::new();
    // A SessionEnd hook that hangs: after the first signal the task is stuck in it.
    let spec = write_spec(
        repo.path(),
        "name: twice\nprompt: go\npermissions:\n  allow: [Bash]\nhooks:\n  SessionEnd:\n    - hooks:\n        - type: command\n          command: \"touch hook.marker; sleep 30\"\n",
    );
    let child = spawn_exec(&mock, &repo, &out, &spec);
    let wait_for = |name: &str| {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !repo.exists(name) {
            assert!(
                std::time::Instant::now() < deadline,
                "{name} never appeared"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let kill = || {
        let st = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(st.success());
    };
    wait_for("tool.marker");
    kill();
    wait_for("hook.marker");
    assert!(!out.junit().exists(), "reports wait for the task");
    kill();
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("second signal"), "{stderr}");
    let xml = std::fs::read_to_string(out.junit()).unwrap();
    assert!(
        xml.contains("<error type=\"interrupted\"") && xml.contains("second signal"),
        "{xml}"
    );
    let r = json_lines(&o.stdout).remove(0);
    assert_eq!(r["runner_outcome"], "interrupted");
    assert_eq!(r["runner_exit_code"], 130);
    // The first signal already ended the task's loop: its transcript has the result record.
    let t = read_json_lines(
        &std::fs::read_dir(out.transcripts())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path().join("transcript.jsonl"))
            .find(|p| p.exists())
            .unwrap(),
    );
    assert_eq!(t.last().unwrap()["subtype"], "runner_result");
    assert_eq!(mock.served(), 1);
    mock.assert_clean();
}
