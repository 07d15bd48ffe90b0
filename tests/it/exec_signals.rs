//! End-to-end: the wall-clock limit and SIGINT/SIGTERM through the real binary.

use std::time::Duration;

use nix::sys::signal::Signal;

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
    let run = exec(&mock, &repo, &out)
        .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", "120000")
        .json()
        .arg(&spec)
        .run();
    run.expect_code(3);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "timeout");
    assert_eq!(r["terminal_reason"], "budget_exhausted");
    mock.assert_clean();
}

fn interrupt_with(signal: Signal, code: i32) {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![stalled()]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: sig\nprompt: hi\n");
    let started = spawn_exec(&mock, &repo, &out, &spec);
    assert!(
        mock.wait_for_requests(1, Duration::from_secs(30)),
        "the request never arrived"
    );
    // Give the stream a moment to deliver its first events (not a timing assertion).
    std::thread::sleep(Duration::from_millis(200));
    started.signal(signal);
    let run = started.wait();
    run.expect_code(code);
    let r = run.result();
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
    interrupt_with(Signal::SIGINT, 130);
}

#[test]
fn sigterm_writes_reports_and_exits_143() {
    interrupt_with(Signal::SIGTERM, 143);
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
        "name: twice\nprompt: go\npermissions:\n  allow: [Bash]\nhooks:\n  SessionEnd:\n    - hooks:\n        - type: command\n          command: \"touch \\\"$CLAUDE_PROJECT_DIR/hook.marker\\\"; sleep 30\"\n",
    );
    let started = spawn_exec(&mock, &repo, &out, &spec);
    wait_until("tool.marker", || repo.exists("tool.marker"));
    started.signal(Signal::SIGINT);
    wait_until("hook.marker", || repo.exists("hook.marker"));
    assert!(!out.junit().exists(), "reports wait for the task");
    started.signal(Signal::SIGINT);
    let run = started.wait();
    run.expect_code(130);
    let stderr = &run.stderr;
    assert!(stderr.contains("second signal"), "{stderr}");
    // The second signal killed the hanging hook: the task finished its own reports.
    let xml = std::fs::read_to_string(out.junit()).unwrap();
    assert!(xml.contains("<error type=\"interrupted\""), "{xml}");
    let r = run.result();
    assert_eq!(r["runner_outcome"], "interrupted");
    assert_eq!(r["runner_exit_code"], 130);
    // The first signal already ended the task's loop: its transcript has the result record.
    let t = out.transcript();
    assert_eq!(t.last().unwrap()["subtype"], "runner_result");
    assert_eq!(mock.served(), 1);
    mock.assert_clean();
}

#[test]
fn a_second_signal_kills_a_tool_that_ignores_sigterm() {
    let repo = TestRepo::new();
    // The tool ignores SIGTERM (so do the processes it starts) and records its pid.
    repo.write(
        "stubborn.sh",
        "trap '' TERM\necho $$ > tool.pid\nsleep 60\ntouch survived\n",
    );
    let mock = MockAnthropic::start(vec![tool_turn(
        "toolu_1",
        "Bash",
        serde_json::json!({"command": "bash \"$PWD/stubborn.sh\""}),
    )]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: stubborn\nprompt: go\npermissions:\n  mode: bypassPermissions\n",
    );
    let started = spawn_exec(&mock, &repo, &out, &spec);
    wait_until("tool.pid", || {
        repo.exists("tool.pid") && !repo.read("tool.pid").trim().is_empty()
    });
    let script = repo.path().join("stubborn.sh");
    let script = script.to_str().unwrap();
    assert!(running_with_arg(script));
    started.signal(Signal::SIGTERM);
    std::thread::sleep(std::time::Duration::from_millis(300));
    started.signal(Signal::SIGTERM);
    let run = started.wait();
    run.expect_code(143);
    // SIGKILL is delivered at once; give the kernel a moment to take the process down.
    wait_until("the tool's process gone", || !running_with_arg(script));
    // Its transcript still ends with the result record.
    let t = out.transcript();
    assert_eq!(
        t.last().unwrap()["subtype"],
        "runner_result",
        "{}",
        run.stderr
    );
    mock.assert_clean();
}

#[test]
fn a_signal_stops_a_running_hook_instead_of_waiting_for_it() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![tool_turn(
        "toolu_1",
        "Bash",
        serde_json::json!({"command": "true"}),
    )]);
    let out = OutDir::new();
    // A PreToolUse hook that would hold the run for 30 s.
    let spec = write_spec(
        repo.path(),
        "name: hooked\nprompt: go\npermissions:\n  allow: [Bash]\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: \"touch \\\"$CLAUDE_PROJECT_DIR/hook.marker\\\"; sleep 30\"\n",
    );
    let started = spawn_exec(&mock, &repo, &out, &spec);
    wait_until("hook.marker", || repo.exists("hook.marker"));
    let signalled = std::time::Instant::now();
    started.signal(Signal::SIGTERM);
    let run = started.wait();
    run.expect_code(143);
    // Well under the hook's 30 s: it was stopped with the run (SIGTERM, then SIGKILL).
    assert!(
        signalled.elapsed() < std::time::Duration::from_secs(15),
        "runner waited {:?} for the hook",
        signalled.elapsed()
    );
    assert!(out.junit().exists());
    mock.assert_clean();
}
