//! End-to-end: several tasks in one run (files and directories, `--jobs`), their outputs and
//! the combined exit code.

use std::collections::{HashMap, HashSet};

use crate::support::*;
use serde_json::{Value, json};

#[test]
fn two_files_text_blocks_and_combined_exit_code() {
    let repo = TestRepo::new();
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", ""));
    let b = write_spec_named(
        repo.path(),
        "b.yaml",
        &named_task(
            "beta",
            "limits:\n  max_turns: 1\npermissions:\n  allow: [\"Bash(touch:*)\"]\n",
        ),
    );
    let mock = MockAnthropic::start(vec![
        text_turn("alpha answer"),
        tool_turn("toolu_1", "Bash", json!({"command": "touch beta.txt"})),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).arg(&a).arg(&b).run();
    run.expect_code(3);
    // The stopped task's block ends with the command that continues it.
    let (blocks, hint) = run
        .stdout
        .split_once("To continue: ")
        .expect("a continue line");
    assert_eq!(
        blocks,
        "== alpha (success) ==\nalpha answer\n== beta (max_turns) ==\nReached maximum number of turns (1)\n"
    );
    assert!(
        hint.starts_with("runner resume ") && hint.ends_with(" --max-turns 11\n"),
        "{hint}"
    );
    assert_eq!(
        task_of(&mock.request(0)),
        "alpha",
        "tasks run in the order given"
    );
    assert_eq!(task_of(&mock.request(1)), "beta");
    // Several tasks in a git repository run in worktrees of their own: beta's file is in its
    // patch, not in the repository.
    assert!(!repo.exists("beta.txt"));
    let patch = std::fs::read_to_string(out.transcripts().join("patches/beta.patch")).unwrap();
    assert!(patch.contains("+++ b/beta.txt"), "{patch}");
    mock.assert_clean();
}

#[test]
fn jobs_1_runs_tasks_in_the_order_given() {
    // Several runs, since an ordering bug shows up only sometimes.
    let repo = TestRepo::new();
    let names = ["t1", "t2", "t3", "t4", "t5", "t6"];
    let paths: Vec<String> = names
        .iter()
        .map(|n| {
            write_spec_named(repo.path(), &format!("{n}.yaml"), &named_task(n, ""))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    for _ in 0..5 {
        let mock = MockAnthropic::start(names.iter().map(|n| text_turn(n)).collect());
        let out = OutDir::new();
        let mut args: Vec<&str> = vec!["--output-format", "json"];
        args.extend(paths.iter().map(String::as_str));
        let run = exec(&mock, &repo, &out).args(&args).run();
        run.expect_code(0);
        let order: Vec<String> = mock.requests().iter().map(task_of).collect();
        assert_eq!(order, names, "request order");
        let tasks: Vec<String> = run
            .json()
            .iter()
            .map(|r| r["runner_task"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(tasks, names, "result lines in order");
        // Each task got the answer of its own turn.
        for r in run.json() {
            assert_eq!(r["result"], r["runner_task"]);
        }
        mock.assert_clean();
    }
}

#[test]
fn directory_of_specs_json_one_line_per_task() {
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    write_spec_named(&dir, "b.yaml", &named_task("second", ""));
    write_spec_named(&dir, "a.yaml", &named_task("first", ""));
    std::fs::write(dir.join("notes.txt"), "not a spec").unwrap();
    // Committed: the tasks run in worktrees checked out from HEAD, where their workdir (the
    // spec directory) must exist.
    repo.commit_all("add tasks");
    let mock = MockAnthropic::start(vec![text_turn("one"), text_turn("two")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).json().arg(&dir).run();
    run.expect_code(0);
    let lines = run.json();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    assert_eq!(lines[0]["runner_task"], "first", "a.yaml sorts first");
    assert_eq!(lines[0]["result"], "one");
    assert_eq!(lines[1]["runner_task"], "second");
    assert_eq!(lines[1]["result"], "two");
    assert_ne!(lines[0]["session_id"], lines[1]["session_id"]);
    assert_ne!(
        lines[0]["runner_transcript_path"],
        lines[1]["runner_transcript_path"]
    );
    for l in &lines {
        assert_eq!(transcript_of(l)[0]["sessionId"], l["session_id"]);
    }
    mock.assert_clean();
}

#[test]
fn stream_json_frames_carry_distinct_sessions_in_order() {
    let repo = TestRepo::new();
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", ""));
    let b = write_spec_named(repo.path(), "b.yaml", &named_task("beta", ""));
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .text("looking")
            .tool_use("toolu_a", "Glob", json!({"pattern": "*"}))
            .turn(),
        text_turn("beta done"),
        text_turn("alpha done"),
    ]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args(["--jobs", "2"])
        .stream_json()
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(0);
    let frames = run.json();
    let mut by_session: HashMap<String, Vec<&Value>> = HashMap::new();
    for f in &frames {
        let sid = f["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("frame without session_id: {f}"));
        by_session.entry(sid.to_string()).or_default().push(f);
    }
    assert_eq!(by_session.len(), 2, "two sessions");
    let mut tasks = HashSet::new();
    for (sid, fs) in &by_session {
        let first = fs.first().unwrap();
        let last = fs.last().unwrap();
        assert_eq!(first["type"], "system", "{sid}: init first");
        assert_eq!(first["subtype"], "init");
        tasks.insert(first["runner_task"].as_str().unwrap().to_string());
        assert_eq!(last["type"], "result", "{sid}: result last");
        assert_eq!(last["runner_task"], first["runner_task"]);
        assert_eq!(last["subtype"], "success");
        assert_eq!(fs.iter().filter(|f| f["type"] == "result").count(), 1);
    }
    assert_eq!(
        tasks,
        HashSet::from(["alpha".to_string(), "beta".to_string()])
    );
    mock.assert_clean();
}

#[test]
fn jobs_2_runs_both_and_the_most_severe_exit_wins() {
    let repo = TestRepo::new();
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", ""));
    let b = write_spec_named(repo.path(), "b.yaml", &named_task("beta", ""));
    // Whichever task asks first gets the 401; the other succeeds.
    let mock = MockAnthropic::start(vec![http_error(401), text_turn("fine")]);
    let out = OutDir::new();
    let junit = out.junit();
    let run = exec(&mock, &repo, &out)
        .args(["--jobs", "2"])
        .json()
        .junit(&junit)
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(4);
    let lines = run.json();
    assert_eq!(lines.len(), 2);
    let mut outcomes: Vec<&str> = lines
        .iter()
        .map(|l| l["runner_outcome"].as_str().unwrap())
        .collect();
    outcomes.sort();
    assert_eq!(outcomes, ["api_error", "success"]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let suites: Vec<_> = doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    assert_eq!(suites, ["alpha", "beta"], "JUnit suites in spec order");
    mock.assert_clean();
}
