//! End-to-end: `runner resume` / `exec --resume` through the real binary against the mock.

use nix::sys::signal::Signal;
use std::path::PathBuf;

use crate::support::*;
use serde_json::{Value, json};

/// Run `runner ARGS...` in `repo` against `mock`.
fn runner_in(mock: &MockAnthropic, repo: &TestRepo, args: &[&str]) -> Run {
    Runner::against(mock)
        .current_dir(repo.path())
        .args(args)
        .run()
}

fn transcript_path(result: &Value) -> PathBuf {
    PathBuf::from(
        result["runner_transcript_path"]
            .as_str()
            .expect("transcript path"),
    )
}

fn subtypes(records: &[Value], subtype: &str) -> usize {
    records.iter().filter(|r| r["subtype"] == subtype).count()
}

/// A run that takes one tool turn (`echo one`) and then hits `max_turns: 1` (exit 3).
fn one_turn_run(mock: &MockAnthropic, repo: &TestRepo, out: &OutDir) -> Value {
    let spec = write_spec(
        repo.path(),
        "name: resumable\nprompt: do the work\npermissions:\n  allow: [\"Bash(echo:*)\"]\nlimits:\n  max_turns: 1\n",
    );
    let run = exec(mock, repo, out).json().arg(&spec).run();
    run.expect_code(3);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "max_turns");
    assert_eq!(r["num_turns"], 1);
    r
}

/// A task whose first response runs a slow command (it touches
/// `started.marker`, sleeps 30 s, touches `finished.marker`) and then a Write of `after.txt`
/// (not concurrency-safe, so it waits for the command), and whose second response ends.
fn slow_command_then_write() -> (TestRepo, MockAnthropic, OutDir, PathBuf, PathBuf) {
    let repo = TestRepo::new();
    let after = repo.path().join("after.txt");
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use(
                "toolu_slow",
                "Bash",
                json!({"command": "touch started.marker && sleep 30 && touch finished.marker"}),
            )
            .tool_use(
                "toolu_write",
                "Write",
                json!({"file_path": after, "content": "x"}),
            )
            .turn(),
        text_turn("all done"),
    ]);
    let spec = write_spec(
        repo.path(),
        "name: slow\nprompt: run the slow thing\npermissions:\n  allow: [\"Bash\", \"Edit\"]\n",
    );
    (repo, mock, OutDir::new(), spec, after)
}

#[test]
fn sigint_mid_tool_then_resume_to_completion() {
    let (repo, mock, out, spec, after) = slow_command_then_write();
    let started = spawn_exec(&mock, &repo, &out, &spec);
    // Wait until the Bash command is really running (a readiness poll, not a timing claim).
    wait_until("the Bash command's start", || repo.exists("started.marker"));
    started.signal(Signal::SIGINT);
    let interrupted = started.wait();
    interrupted.expect_code(130);
    let first = interrupted.result();
    assert_eq!(first["runner_outcome"], "interrupted");
    assert_eq!(first["terminal_reason"], "aborted_tools");
    assert!(!repo.exists("finished.marker"), "the tool was not stopped");
    let xml = std::fs::read_to_string(out.junit()).unwrap();
    assert!(xml.contains("<error type=\"interrupted\""), "{xml}");
    let t = transcript_of(&first);
    let results: Vec<&Value> = records_of(&t, "user")
        .into_iter()
        .filter(|r| r["message"]["content"][0]["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 2, "both calls have a result");
    assert!(
        results
            .iter()
            .all(|r| r["message"]["content"][0]["is_error"] == true)
    );
    assert!(
        !after.exists(),
        "a call not yet started when the signal came is not run"
    );
    assert_eq!(t.last().unwrap()["subtype"], "runner_result");

    let path = transcript_path(&first);
    let run = runner_in(
        &mock,
        &repo,
        &[
            "resume",
            path.to_str().unwrap(),
            "--output-format",
            "json",
            "--junit",
            out.junit().to_str().unwrap(),
        ],
    );
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "success");
    assert_eq!(r["result"], "all done");
    assert_eq!(r["num_turns"], 2, "turns continue from the first run");
    assert_eq!(r["session_id"], first["session_id"]);
    assert_eq!(
        transcript_path(&r),
        path,
        "the same transcript is appended to"
    );
    let xml = std::fs::read_to_string(out.junit()).unwrap();
    assert!(!xml.contains("<error"), "{xml}");

    // The resumed request carries the whole conversation, same system prompt and tools.
    assert_eq!(mock.served(), 2);
    let (a, b) = (mock.request(0), mock.request(1));
    let msgs = b.messages();
    assert_eq!(msgs.len(), 3, "{msgs:?}");
    assert_eq!(b.message_text(0), "run the slow thing");
    let result = b
        .tool_result("toolu_slow")
        .expect("the tool result is sent");
    assert_eq!(result["is_error"], true);
    assert!(
        b.tool_result_text("toolu_write")
            .unwrap()
            .contains("interrupted before this tool call started")
    );
    assert!(!after.exists(), "resuming does not run the call again");
    assert_eq!(a.system_text(), b.system_text());
    assert_eq!(a.tool_names(), b.tool_names());
    assert_eq!(a.body["tools"], b.body["tools"]);

    let t = read_json_lines(&path);
    assert_eq!(subtypes(&t, "runner_init"), 1);
    assert_eq!(subtypes(&t, "runner_resume"), 1);
    assert_eq!(subtypes(&t, "runner_result"), 2);
    assert_chain(&t);
    assert!(t.iter().all(|r| r["sessionId"] == first["session_id"]));
    mock.assert_clean();
}

#[test]
fn truncated_transcript_resumes_and_turns_continue() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
        text_turn("finished"),
    ]);
    let out = OutDir::new();
    let first = one_turn_run(&mock, &repo, &out);
    let path = transcript_path(&first);

    // Kill the run mid-write: drop the result record and cut the tool_result record in half.
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        serde_json::from_str::<Value>(lines.pop().unwrap()).unwrap()["subtype"],
        "runner_result"
    );
    // (The turn's timing record comes after its tool results.)
    let timing = lines.pop().unwrap();
    assert!(timing.contains("\"runner_timing\""), "{timing}");
    let tool_result = lines.pop().unwrap();
    assert!(tool_result.contains("tool_result"), "{tool_result}");
    let mut cut = lines.join("\n");
    cut.push('\n');
    cut.push_str(&tool_result[..tool_result.len() / 2]);
    std::fs::write(&path, &cut).unwrap();

    let run = exec(&mock, &repo, &out)
        .arg("--resume")
        .arg(&path)
        .args(["--max-turns", "2", "--prompt", "carry on"])
        .json()
        .run();
    run.expect_code(0);
    assert!(
        run.stderr.contains("truncated record"),
        "the truncated line is reported:\n{}",
        run.stderr
    );
    let r = run.result();
    assert_eq!(r["runner_outcome"], "success");
    assert_eq!(r["num_turns"], 2);
    assert_eq!(r["usage"]["input_tokens"], 20, "usage continues: {r}");

    // The call whose result was lost gets a synthetic error result; it is not run again.
    let req = mock.request(1);
    let res = req
        .tool_result("toolu_1")
        .expect("a result for the cut call");
    assert_eq!(res["is_error"], true);
    assert!(
        req.tool_result_text("toolu_1")
            .unwrap()
            .contains("run stopped before this tool call finished"),
    );
    // The prompt follows the tool results in the same user message.
    let last = req.last_message().unwrap();
    assert_eq!(last["content"].as_array().unwrap().len(), 2, "{last}");
    assert_eq!(last["content"][1]["text"], "carry on");

    // New records start on their own line; the partial line stays behind, skipped.
    let text = std::fs::read_to_string(&path).unwrap();
    let bad: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| serde_json::from_str::<Value>(l).is_err())
        .map(|(i, _)| i)
        .collect();
    assert_eq!(bad.len(), 1, "only the cut line is malformed");
    let records: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(subtypes(&records, "runner_resume"), 1);
    let chain: Vec<Value> = records
        .iter()
        .filter(|r| r["type"] == "user" || r["type"] == "assistant")
        .cloned()
        .collect();
    assert_chain(&chain);
    mock.assert_clean();
}

#[test]
fn budgets_continue_max_turns_counts_turns_from_before() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
        text_turn("never sent"),
    ]);
    let out = OutDir::new();
    let first = one_turn_run(&mock, &repo, &out);
    let path = transcript_path(&first);
    // The spec changes after the run: the recorded spec (max_turns: 1) is still used.
    write_spec(
        repo.path(),
        "name: resumable\nprompt: something else\nlimits:\n  max_turns: 9\n",
    );

    let run = runner_in(
        &mock,
        &repo,
        &["resume", path.to_str().unwrap(), "--output-format", "json"],
    );
    run.expect_code(3);
    assert!(
        run.stderr.contains("changed since the run")
            && run.stderr.contains("limits, permissions, prompt"),
        "{}",
        run.stderr
    );
    let r = run.result();
    assert_eq!(r["runner_outcome"], "max_turns");
    assert_eq!(r["num_turns"], 1);
    assert_eq!(
        mock.served(),
        1,
        "no request: the limit was already reached"
    );

    // With the current spec (max_turns: 9) the run goes on.
    let run = runner_in(
        &mock,
        &repo,
        &[
            "resume",
            path.to_str().unwrap(),
            "--use-current-spec",
            "--output-format",
            "json",
        ],
    );
    run.expect_code(0);
    assert_eq!(run.result()["num_turns"], 2);
    assert_eq!(mock.served(), 2);
    mock.assert_clean();
}

#[test]
fn finished_run_needs_a_prompt_to_continue() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("done"), text_turn("more")]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: done\nprompt: hi\n");
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let path = transcript_path(&run.result());
    let run = runner_in(&mock, &repo, &["resume", path.to_str().unwrap()]);
    run.expect_code(2);
    assert!(run.stderr.contains("already finished"), "{}", run.stderr);
    let run = runner_in(
        &mock,
        &repo,
        &[
            "resume",
            path.to_str().unwrap(),
            "--prompt",
            "one more thing",
            "--output-format",
            "json",
        ],
    );
    run.expect_code(0);
    assert_eq!(run.result()["result"], "more");
    let req = mock.request(1);
    let last = req.messages().len() - 1;
    assert_eq!(req.message_text(last), "one more thing");
    mock.assert_clean();
}

fn fixture(name: &str) -> PathBuf {
    fixture_path(&format!("transcripts/{name}"))
}

#[test]
fn claude_code_transcript_resumes_with_the_given_spec() {
    let src = fixture("claude-code-viewer_session_fe5e1c67_v1.0.98_first40lines.jsonl");
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("picked up")]);
    let copy = repo.path().join("session.jsonl");
    std::fs::copy(&src, &copy).unwrap();
    let spec = write_spec(repo.path(), "name: cc\nprompt: unused\n");

    // Without a spec it cannot be resumed.
    let run = runner_in(&mock, &repo, &["resume", copy.to_str().unwrap()]);
    run.expect_code(2);
    assert!(
        run.stderr.contains("not a runner transcript"),
        "{}",
        run.stderr
    );

    let run = runner_in(
        &mock,
        &repo,
        &[
            "resume",
            copy.to_str().unwrap(),
            spec.to_str().unwrap(),
            "--output-format",
            "json",
        ],
    );
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "success");
    let original: Vec<Value> = read_json_lines(&src);
    let session = original
        .iter()
        .find_map(|r| r["sessionId"].as_str())
        .unwrap();
    assert_eq!(r["session_id"], session);

    // The main chain only (no sidechain records), merged into alternating messages, with the
    // two calls the session never answered given error results.
    let req = mock.request(0);
    let first_prompt = original
        .iter()
        .find(|r| r["type"] == "user" && r["isSidechain"] == false)
        .unwrap();
    // (Its first two user records, the prompt and its expansion, are one message.)
    assert!(
        req.message_text(0)
            .starts_with(first_prompt["message"]["content"].as_str().unwrap())
    );
    let last = req.last_message().unwrap();
    assert_eq!(last["role"], "user");
    let results = last["content"].as_array().unwrap();
    let ids: Vec<&Value> = results.iter().map(|b| &b["tool_use_id"]).collect();
    assert_eq!(results.len(), 3, "{ids:?}");
    assert_eq!(
        results.iter().filter(|b| b["is_error"] == true).count(),
        2,
        "{last}"
    );
    let appended = read_json_lines(&copy);
    // The last "+ 1": the resumed turn's runner_timing record.
    assert_eq!(appended.len(), original.len() + 2 + 1 + 1 + 1 + 1);
    assert_eq!(subtypes(&appended, "runner_resume"), 1);
    mock.assert_clean();
}

#[test]
fn resume_continues_in_the_recorded_worktree() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
        text_turn("done there"),
    ]);
    let out = OutDir::new();
    let first = one_turn_run(&mock, &repo, &out);
    let path = transcript_path(&first);

    // exec --resume continues one run: two specs are refused before anything runs.
    let spec = repo.path().join("task.yaml");
    let run = exec(&mock, &repo, &out)
        .arg("--resume")
        .arg(&path)
        .arg(&spec)
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("at most one task spec"),
        "{}",
        run.stderr
    );

    // A worktree recorded by the run (as `git:` isolation writes it) is where it continues.
    let worktree = TestRepo::new();
    let envelope = read_json_lines(&path)
        .into_iter()
        .find(|r| r["type"] == "system" && r.get("sessionId").is_some())
        .unwrap();
    let mut record = json!({"type": "system", "subtype": "runner_worktree", "parentUuid": null,
        "uuid": "w-1", "worktree": worktree.path(), "repoRoot": repo.path(),
        "baseCommit": "0000000000000000000000000000000000000000", "level": "info",
        "content": "task runs in git worktree", "logicalParentUuid": null});
    for key in [
        "isSidechain",
        "userType",
        "entrypoint",
        "cwd",
        "sessionId",
        "version",
        "gitBranch",
        "timestamp",
    ] {
        record[key] = envelope[key].clone();
    }
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(&format!("{record}\n"));
    std::fs::write(&path, text).unwrap();
    let run = runner_in(
        &mock,
        &repo,
        &[
            "resume",
            path.to_str().unwrap(),
            "--max-turns",
            "2",
            "--output-format",
            "json",
        ],
    );
    run.expect_code(0);
    let t = read_json_lines(&path);
    let resumed = t.iter().find(|r| r["subtype"] == "runner_resume").unwrap();
    let canon = std::fs::canonicalize(worktree.path()).unwrap();
    assert_eq!(resumed["cwd"], canon.display().to_string());

    // A workdir that is gone cannot be resumed.
    drop(worktree);
    let run = runner_in(
        &mock,
        &repo,
        &["resume", path.to_str().unwrap(), "--prompt", "x"],
    );
    run.expect_code(2);
    assert!(run.stderr.contains("no longer exists"), "{}", run.stderr);
    mock.assert_clean();
}

#[test]
fn kill_9_during_a_command_then_resume_says_it_may_have_run_and_stops_its_group() {
    let (repo, mock, out, spec, after) = slow_command_then_write();
    let started = spawn_exec(&mock, &repo, &out, &spec);
    wait_until("the Bash command's start", || repo.exists("started.marker"));
    started.signal(Signal::SIGKILL);
    started.wait();

    // The command was on record, with its process group, before the run died.
    let path = find_transcript(&out.transcripts()).expect("a transcript");
    let t = read_json_lines(&path);
    let marks: Vec<&Value> = t
        .iter()
        .filter(|r| r["subtype"] == "runner_tool_started")
        .collect();
    assert_eq!(marks.len(), 1, "only the started call is marked: {marks:?}");
    assert_eq!(marks[0]["toolUseId"], "toolu_slow");
    assert_eq!(marks[0]["toolName"], "Bash");
    let pgid = marks[0]["processGroup"]["pgid"].as_i64().expect("a pgid") as i32;
    assert!(
        group_running(pgid),
        "the command's group outlives a runner killed with SIGKILL"
    );

    let run = runner_in(
        &mock,
        &repo,
        &["resume", path.to_str().unwrap(), "--output-format", "json"],
    );
    run.expect_code(0);
    assert_eq!(run.result()["result"], "all done");
    let b = mock.request(1);
    let slow = b.tool_result_text("toolu_slow").unwrap();
    assert!(
        slow.contains("started and may have completed"),
        "a started call is not re-offered as not run: {slow}"
    );
    let write = b.tool_result_text("toolu_write").unwrap();
    assert!(
        write.contains("Not run"),
        "a call that never started may run again: {write}"
    );
    wait_until("the leftover group to be killed", || !group_running(pgid));
    assert!(!repo.exists("finished.marker"));
    assert!(!after.exists());
    mock.assert_clean();
}

/// Whether a process of group `pgid` runs (zombies, which a container's init may never reap,
/// do not count).
fn group_running(pgid: i32) -> bool {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .any(|stat| {
            let Some((_, rest)) = stat.rsplit_once(") ") else {
                return false;
            };
            let f: Vec<&str> = rest.split_whitespace().collect();
            f.len() > 2 && f[0] != "Z" && f[2] == pgid.to_string()
        })
}
