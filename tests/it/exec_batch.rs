//! End-to-end: batch options through the real binary against the mock — `--fail-fast`,
//! `--max-total-cost-usd`, `--shard`, `result.json` + `--skip-passed`, and
//! `runner report merge` of shard reports.

use std::collections::HashSet;
use std::path::Path;

use crate::support::*;
use serde_json::Value;

/// A task spec. These tests are about batch scheduling, not git: the specs live untracked in the
/// test repository, so tasks run in place (`isolate: false`) rather than in worktrees of HEAD.
fn task(name: &str, extra: &str) -> String {
    named_task(name, &format!("git:\n  isolate: false\n{extra}"))
}

fn outcomes(run: &Run) -> Vec<(String, String)> {
    run.json()
        .iter()
        .map(|r| {
            (
                r["runner_task"].as_str().unwrap().to_string(),
                r["runner_outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(v: &[(&str, &str)]) -> Vec<(String, String)> {
    v.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// (tests, failures, errors, skipped-testcases) of a JUnit file, counted from its elements.
fn junit_counts(path: &Path) -> (String, usize, usize, usize, usize) {
    let text = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let root = doc.root_element();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    let with = |tag: &str| {
        cases
            .iter()
            .filter(|c| c.children().any(|k| k.has_tag_name(tag)))
            .count()
    };
    (
        root.attribute("tests").unwrap_or_default().to_string(),
        cases.len(),
        with("failure"),
        with("error"),
        with("skipped"),
    )
}

#[test]
fn fail_fast_skips_the_tasks_not_started() {
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    write_spec_named(&dir, "a.yaml", &task("a-ok", ""));
    write_spec_named(
        &dir,
        "b.yaml",
        &task(
            "b-fails",
            "verify:\n  - name: always-false\n    run: \"false\"\n",
        ),
    );
    write_spec_named(&dir, "c.yaml", &task("c-later", ""));
    write_spec_named(&dir, "d.yaml", &task("d-later", ""));
    let mock = MockAnthropic::start(vec![text_turn("ok a"), text_turn("done b")]);
    let out = OutDir::new();
    let junit = out.junit();
    let run = exec(&mock, &repo, &out)
        .arg("--fail-fast")
        .json()
        .junit(&junit)
        .arg(&dir)
        .run();
    run.expect_code(1);
    assert_eq!(
        outcomes(&run),
        pairs(&[
            ("a-ok", "success"),
            ("b-fails", "checks_failed"),
            ("c-later", "skipped"),
            ("d-later", "skipped"),
        ])
    );
    let skipped = &run.json()[2];
    assert_eq!(skipped["runner_exit_code"], 0);
    assert_eq!(skipped["num_turns"], 0);
    assert_eq!(
        skipped["runner_skip_reason"],
        "not started: --fail-fast after task `b-fails` failed"
    );
    assert_eq!(mock.requests().len(), 2, "c and d never reached the model");
    let (_, cases, failures, errors, skipped) = junit_counts(&junit);
    assert_eq!((failures, errors, skipped), (2, 0, 2), "{cases} cases");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("--fail-fast after task `b-fails` failed"),
        "{xml}"
    );
    assert_junit_valid(&junit);
    mock.assert_clean();
}

#[test]
fn without_fail_fast_every_task_runs() {
    let repo = TestRepo::new();
    let a = write_spec_named(
        repo.path(),
        "a.yaml",
        &task("a-fails", "verify:\n  - run: \"false\"\n"),
    );
    let b = write_spec_named(repo.path(), "b.yaml", &task("b-ok", ""));
    let mock = MockAnthropic::start(vec![text_turn("a"), text_turn("b")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).json().arg(&a).arg(&b).run();
    run.expect_code(1);
    assert_eq!(
        outcomes(&run),
        pairs(&[("a-fails", "checks_failed"), ("b-ok", "success")])
    );
}

#[test]
fn max_total_cost_skips_tasks_once_the_cap_is_reached() {
    let repo = TestRepo::new();
    let names = ["t1", "t2", "t3"];
    let paths: Vec<String> = names
        .iter()
        .map(|n| {
            write_spec_named(repo.path(), &format!("{n}.yaml"), &task(n, ""))
                .display()
                .to_string()
        })
        .collect();
    // claude-sonnet-4-5 input is $3/MTok: t1 costs $1.50, t2 $1.50 (total $3 >= $2.50 cap).
    let mock = MockAnthropic::start(vec![
        Resp::new().text("one").usage(500_000, 0).turn(),
        Resp::new().text("two").usage(500_000, 0).turn(),
    ]);
    let out = OutDir::new();
    let mut args = vec![
        "--max-total-cost-usd",
        "2.5",
        "--output-format",
        "stream-json",
    ];
    args.extend(paths.iter().map(String::as_str));
    let run = exec(&mock, &repo, &out).args(&args).run();
    run.expect_code(0);
    let lines = run.json();
    let results = events_of(&lines, "result", None);
    let got: Vec<(&str, &str)> = results
        .iter()
        .map(|r| {
            (
                r["runner_task"].as_str().unwrap(),
                r["runner_outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [("t1", "success"), ("t2", "success"), ("t3", "skipped")]
    );
    let t3 = results[2];
    assert!(
        t3["runner_skip_reason"]
            .as_str()
            .unwrap()
            .contains("reaching --max-total-cost-usd 2.5"),
        "{t3}"
    );
    assert_eq!(mock.requests().len(), 2);
    mock.assert_clean();
}

#[test]
fn max_total_cost_needs_priced_models() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\nmodel: my-local-model\n");
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .args(["--max-total-cost-usd", "1"])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("task.yaml:1:1: --max-total-cost-usd 1 needs a priced model"),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
    let bad = Runner::new()
        .args(["exec", "--max-total-cost-usd", "0", spec.to_str().unwrap()])
        .run();
    assert_eq!(bad.code, Some(2));
    assert!(bad.stderr.contains("not a positive amount"));
}

#[test]
fn shards_partition_the_tasks_and_their_reports_merge() {
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    let names: Vec<String> = (0..8).map(|i| format!("task-{i}")).collect();
    for n in &names {
        write_spec_named(&dir, &format!("{n}.yaml"), &task(n, ""));
    }
    let out = OutDir::new();
    let mut seen = Vec::new();
    let mut reports = Vec::new();
    for i in 1..=3 {
        let mock = MockAnthropic::start((0..8).map(|_| text_turn("ok")).collect());
        let junit = out.path().join(format!("shard-{i}.xml"));
        let shard = format!("{i}/3");
        let run = exec(&mock, &repo, &out)
            .arg("--shard")
            .arg(&shard)
            .json()
            .junit(&junit)
            .arg(&dir)
            .run();
        run.expect_code(0);
        let these: Vec<String> = outcomes(&run).into_iter().map(|(n, _)| n).collect();
        assert_eq!(mock.requests().len(), these.len());
        // The same shard again selects the same tasks.
        let again = MockAnthropic::start((0..8).map(|_| text_turn("ok")).collect());
        let run2 = exec(&again, &repo, &out)
            .arg("--shard")
            .arg(&shard)
            .json()
            .arg(&dir)
            .run();
        let these2: Vec<String> = outcomes(&run2).into_iter().map(|(n, _)| n).collect();
        assert_eq!(these, these2, "shard {shard} is deterministic");
        seen.extend(these);
        reports.push(junit);
    }
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(
        seen.len(),
        names.len(),
        "every task in exactly one shard: {seen:?}"
    );
    assert_eq!(unique.len(), names.len());

    let merged = out.path().join("all.xml");
    Runner::new()
        .args(["report", "merge"])
        .args(&reports)
        .arg("-o")
        .arg(&merged)
        .run()
        .expect_code(0);
    let (tests_attr, cases, failures, errors, skipped) = junit_counts(&merged);
    assert_eq!(tests_attr, "8");
    assert_eq!((cases, failures, errors, skipped), (8, 0, 0, 0));
    let text = std::fs::read_to_string(&merged).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let suites: HashSet<&str> = doc
        .root_element()
        .children()
        .filter(|n| n.has_tag_name("testsuite"))
        .map(|n| n.attribute("name").unwrap())
        .collect();
    assert_eq!(suites.len(), 8);
    assert_junit_valid(&merged);
}

/// The tasks (sorted) a run with `args` and `env` selects from the eight tasks in `dir`.
fn selected(repo: &TestRepo, dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Vec<String> {
    let mock = MockAnthropic::start((0..8).map(|_| text_turn("ok")).collect());
    let out = OutDir::new();
    let mut r = exec(&mock, repo, &out).args(args).json();
    for (k, v) in env {
        r = r.env(k, v);
    }
    let run = r.arg(dir).run();
    run.expect_code(0);
    let mut names: Vec<String> = outcomes(&run).into_iter().map(|(n, _)| n).collect();
    names.sort();
    assert_eq!(mock.requests().len(), names.len());
    names
}

#[test]
fn shard_auto_reads_the_indexed_job_environment() {
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    for i in 0..8 {
        let n = format!("task-{i}");
        write_spec_named(&dir, &format!("{n}.yaml"), &task(&n, ""));
    }
    let mut seen = Vec::new();
    for index in 0..3 {
        let fixed = selected(&repo, &dir, &["--shard", &format!("{}/3", index + 1)], &[]);
        let i = index.to_string();
        // The count from RUNNER_SHARD_COUNT, or from --shard-count (which wins).
        let from_env = selected(
            &repo,
            &dir,
            &["--shard", "auto"],
            &[("JOB_COMPLETION_INDEX", &i), ("RUNNER_SHARD_COUNT", "3")],
        );
        let from_flag = selected(
            &repo,
            &dir,
            &["--shard", "auto", "--shard-count", "3"],
            &[("JOB_COMPLETION_INDEX", &i), ("RUNNER_SHARD_COUNT", "7")],
        );
        assert_eq!(from_env, fixed, "index {index}");
        assert_eq!(from_flag, fixed, "index {index}");
        seen.extend(fixed);
    }
    seen.sort();
    assert_eq!(seen.len(), 8, "every task in exactly one shard: {seen:?}");
    seen.dedup();
    assert_eq!(seen.len(), 8);

    // What is missing or wrong is an error before anything runs (exit 2).
    let spec = dir.join("task-0.yaml");
    let fails = |args: &[&str], env: &[(&str, &str)], says: &str| {
        let mut r = Runner::new().arg("exec").args(args).arg(&spec);
        for (k, v) in env {
            r = r.env(k, v);
        }
        let o = r.run();
        assert_eq!(o.code, Some(2), "{args:?} {env:?}: {}", o.stderr);
        assert!(o.stderr.contains(says), "{args:?} {env:?}: {}", o.stderr);
    };
    fails(
        &["--shard", "auto", "--shard-count", "3"],
        &[],
        "--shard auto needs JOB_COMPLETION_INDEX",
    );
    fails(
        &["--shard", "auto"],
        &[("JOB_COMPLETION_INDEX", "0")],
        "--shard-count N or RUNNER_SHARD_COUNT",
    );
    fails(
        &["--shard", "auto"],
        &[("JOB_COMPLETION_INDEX", "3"), ("RUNNER_SHARD_COUNT", "3")],
        "JOB_COMPLETION_INDEX is 3, but there are 3 shards",
    );
    fails(&["--shard-count", "3"], &[], "--shard");
}

#[test]
fn shard_and_merge_errors_are_clear() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &task("t", ""));
    let o = Runner::new()
        .args(["exec", "--shard", "3/2", spec.to_str().unwrap()])
        .run();
    assert_eq!(o.code, Some(2));
    assert!(o.stderr.contains("invalid shard `3/2`"));

    let junk = repo.write("junk.xml", "<html/>");
    let o = Runner::new()
        .args(["report", "merge"])
        .arg(&junk)
        .arg("-o")
        .arg(repo.path().join("out.xml"))
        .run();
    assert_eq!(o.code, Some(2));
    assert!(
        o.stderr
            .as_str()
            .contains("no <testsuites> or <testsuite> element found"),
        "{}",
        o.stderr
    );
    assert!(!repo.exists("out.xml"));
}

fn result_files(dir: &Path) -> Vec<Value> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path().join("result.json");
        if p.is_file() {
            found.push(serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap());
        }
    }
    found
}

#[test]
fn result_json_and_skip_passed() {
    let repo = TestRepo::new();
    repo.write("README", "x\n");
    repo.commit_all("base");
    let head = repo.git(&["rev-parse", "HEAD"]).trim().to_string();
    let spec = write_spec_named(repo.path(), "ok.yaml", &task("ok", ""));
    let failing = write_spec_named(
        repo.path(),
        "bad.yaml",
        &task("bad", "verify:\n  - run: \"false\"\n"),
    );
    let args_for = |extra: &[&str]| {
        let mut v: Vec<String> = vec!["--output-format".into(), "json".into()];
        v.extend(extra.iter().map(|s| s.to_string()));
        v.push(spec.display().to_string());
        v.push(failing.display().to_string());
        v
    };
    let out = OutDir::new();
    let mock = MockAnthropic::start(vec![text_turn("one"), text_turn("two")]);
    let a = args_for(&[]);
    let run = exec(&mock, &repo, &out).args(a).run();
    run.expect_code(1);
    let files = result_files(&out.transcripts());
    assert_eq!(files.len(), 2);
    let ok = files.iter().find(|f| f["task"] == "ok").unwrap();
    assert_eq!(ok["outcome"], "success");
    assert_eq!(ok["base_commit"], head.as_str());
    assert_eq!(ok["spec_digest"].as_str().unwrap().len(), 64);
    assert_eq!(ok["num_turns"], 1);
    let transcript = read_json_lines(Path::new(ok["transcript_path"].as_str().unwrap()));
    let digest = transcript
        .iter()
        .find_map(|r| r.get("specDigest").and_then(Value::as_str))
        .expect("the first record holds the spec digest");
    assert_eq!(
        ok["spec_digest"], digest,
        "result.json and transcript agree"
    );
    let bad = files.iter().find(|f| f["task"] == "bad").unwrap();
    assert_eq!(bad["outcome"], "checks_failed");

    // Second run: `ok` passed with the same digest and commit, so it is skipped; `bad` reruns.
    let mock2 = MockAnthropic::start(vec![text_turn("again")]);
    let prev = out.transcripts().display().to_string();
    let a = args_for(&["--skip-passed", &prev]);
    let run = exec(&mock2, &repo, &out).args(a).run();
    run.expect_code(1);
    assert_eq!(
        outcomes(&run),
        pairs(&[("ok", "skipped"), ("bad", "checks_failed")])
    );
    assert!(
        run.json()[0]["runner_skip_reason"]
            .as_str()
            .unwrap()
            .starts_with("passed before with the same spec digest and base commit")
    );
    assert_eq!(mock2.requests().len(), 1);
    assert_eq!(task_of_first(&mock2), "task bad");

    // A different model (digest changes) or a new commit reruns it.
    let mock3 = MockAnthropic::start(vec![text_turn("x"), text_turn("y")]);
    let a = args_for(&["--skip-passed", &prev, "--model", "claude-opus-4-1"]);
    let run = exec(&mock3, &repo, &out).args(a).run();
    assert_eq!(
        outcomes(&run),
        pairs(&[("ok", "success"), ("bad", "checks_failed")])
    );
    repo.write("README", "y\n");
    repo.commit_all("next");
    let mock4 = MockAnthropic::start(vec![text_turn("x"), text_turn("y")]);
    let a = args_for(&["--skip-passed", &prev]);
    let run = exec(&mock4, &repo, &out).args(a).run();
    assert_eq!(outcomes(&run)[0], ("ok".to_string(), "success".to_string()));
}

fn task_of_first(mock: &MockAnthropic) -> String {
    mock.request(0).message_text(0)
}

#[test]
fn matrix_list_expands_substitutes_and_quotes() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.path().join("crates/core")).unwrap();
    std::fs::create_dir_all(repo.path().join("crates/cli")).unwrap();
    let spec = write_spec(
        repo.path(),
        r#"name: fix
prompt: "fix {{dir}} ({{ label }})"
model: claude-sonnet-4-5
workdir: crates/{{dir}}
git:
  isolate: false
matrix:
  - {dir: core, label: "it's; touch pwned"}
  - {dir: cli, label: 7}
verify:
  - name: check-{{dir}}
    run: test {{label}} = "$RUNNER_PARAM_LABEL" && test "$(basename "$PWD")" = {{dir}}
"#,
    );
    let mock = MockAnthropic::start(vec![text_turn("a"), text_turn("b")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert_eq!(
        outcomes(&run),
        pairs(&[
            ("fix[dir=core,label=it's; touch pwned]", "success"),
            ("fix[dir=cli,label=7]", "success"),
        ])
    );
    let checks: Vec<String> = run
        .json()
        .iter()
        .map(|r| r["runner_checks"][0]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(checks, ["check-core", "check-cli"]);
    assert_eq!(
        mock.request(0).message_text(0),
        "fix core (it's; touch pwned)"
    );
    assert_eq!(mock.request(1).message_text(0), "fix cli (7)");
    assert!(!repo.exists("crates/core/pwned") && !repo.exists("pwned"));
    // Each expanded task has its own result.json with its own digest.
    let files = result_files(&out.transcripts());
    assert_eq!(files.len(), 2);
    assert_ne!(files[0]["spec_digest"], files[1]["spec_digest"]);
    mock.assert_clean();
}

#[test]
fn matrix_glob_one_task_per_crate_and_validate_lists_them() {
    let repo = TestRepo::new();
    for c in ["crates/alpha", "crates/beta"] {
        std::fs::create_dir_all(repo.path().join(c)).unwrap();
        repo.write(&format!("{c}/Cargo.toml"), "[package]\n");
    }
    let spec = write_spec(
        repo.path(),
        "name: lint-{{basename}}\nprompt: lint {{path}}\nmodel: claude-sonnet-4-5\nworkdir: \"{{path}}\"\nmatrix:\n  glob: crates/*\nverify:\n  - run: test -f Cargo.toml && test \"$RUNNER_PARAM_PATH\" = {{path}}\n",
    );
    // Before the first commit there is no HEAD to isolate the tasks in: validate says so,
    // as exec would.
    let v = Runner::new().arg("validate").arg(&spec).run();
    assert_eq!(v.code, Some(2));
    assert!(v.stderr.contains("HEAD"), "{}", v.stderr);
    // Committed, so each expanded task runs isolated in a worktree of HEAD.
    repo.commit_all("add crates and the spec");
    let v = Runner::new().arg("validate").arg(&spec).run();
    assert_eq!(v.code, Some(0));
    let listed = &v.stdout;
    assert!(
        listed.contains("(lint-alpha)") && listed.contains("(lint-beta)"),
        "{listed}"
    );
    let mock = MockAnthropic::start(vec![text_turn("a"), text_turn("b")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert_eq!(
        outcomes(&run),
        pairs(&[("lint-alpha", "success"), ("lint-beta", "success")])
    );
    assert_eq!(mock.request(1).message_text(0), "lint crates/beta");
}

#[test]
fn matrix_unknown_placeholder_is_a_spec_error_and_nothing_runs() {
    let repo = TestRepo::new();
    let good = write_spec_named(repo.path(), "good.yaml", &task("good", ""));
    let bad = write_spec_named(
        repo.path(),
        "bad.yaml",
        "name: t\nprompt: hi\nmatrix:\n  - {a: 1}\nverify:\n  - run: echo {{a}} {{b}}\n",
    );
    let mock = MockAnthropic::start(vec![text_turn("never")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out).arg(&good).arg(&bad).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains(
            "bad.yaml:6:21: `{{b}}` in `verify[0].run` names no matrix parameter; expected one of: a"
        ),
        "{}",
        run.stderr
    );
    assert!(mock.requests().is_empty());
    // Duplicate expanded names are caught too.
    let dup = write_spec_named(
        repo.path(),
        "dup.yaml",
        "name: same-{{a}}\nprompt: hi\nmatrix:\n  - {a: 1, b: 1}\n  - {a: 1, b: 2}\n",
    );
    let run = exec(&mock, &repo, &out).arg(&dup).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("task name `same-1` is also used"),
        "{}",
        run.stderr
    );
    let empty = write_spec_named(
        repo.path(),
        "e.yaml",
        "name: t\nprompt: hi\nmatrix:\n  glob: nope/*\n",
    );
    let run = exec(&mock, &repo, &out).arg(&empty).run();
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("e.yaml:4:3: glob \"nope/*\" matched nothing"),
        "{}",
        run.stderr
    );
}

/// What GitHub's runner makes of stderr: the workflow commands it would process (outside
/// `::stop-commands::` regions), and the lines inside each `::group::`, by title.
fn actions_view(stderr: &str) -> (Vec<String>, Vec<(String, Vec<String>)>) {
    let mut commands = Vec::new();
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    let mut open = false;
    let mut stopped: Option<String> = None;
    for line in stderr.lines() {
        if let Some(t) = &stopped {
            if line == format!("::{t}::") {
                stopped = None;
            } else if open {
                groups.last_mut().unwrap().1.push(line.to_string());
            }
            continue;
        }
        if let Some(t) = line.strip_prefix("::stop-commands::") {
            stopped = Some(t.to_string());
        } else if let Some(title) = line.strip_prefix("::group::") {
            assert!(!open, "nested or interleaved group at {line}");
            open = true;
            groups.push((title.to_string(), Vec::new()));
        } else if line == "::endgroup::" {
            assert!(open, "endgroup without group");
            open = false;
        } else if line.starts_with("::") {
            commands.push(line.to_string());
        } else if open {
            groups.last_mut().unwrap().1.push(line.to_string());
        }
    }
    assert!(!open, "a group was left open");
    (commands, groups)
}

#[test]
fn github_actions_groups_concurrent_task_logs_without_interleaving() {
    let repo = TestRepo::new();
    let evil = "::set-output name=conclusion::success\n::endgroup::\n::group::fake";
    let a = write_spec_named(
        repo.path(),
        "a.yaml",
        &task(
            "alpha",
            "permissions:\n  mode: plan\nverify:\n  - name: shout\n    run: echo '::error::from alpha check'\n",
        ),
    );
    // Read-only (plan mode): two tasks in place in one checkout may run at once only when
    // neither writes.
    let b = write_spec_named(
        repo.path(),
        "b.yaml",
        &task("beta", "permissions:\n  mode: plan\n"),
    );
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Glob", serde_json::json!({"pattern": "*"}))
            .turn(),
        text_turn(evil),
        text_turn(evil),
    ]);
    let out = OutDir::new();
    let summary = out.path().join("summary.md");
    let outputs = out.path().join("outputs.txt");
    let run = exec(&mock, &repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())
        .env("GITHUB_OUTPUT", outputs.to_str().unwrap())
        .args(["--jobs", "2"])
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(0);
    let (commands, groups) = actions_view(&run.stderr);
    let titles: HashSet<&str> = groups.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        titles,
        HashSet::from(["alpha (success)", "beta (success)"]),
        "{}",
        run.stderr
    );
    for (title, lines) in &groups {
        let me = title.split(' ').next().unwrap();
        let other = if me == "alpha" { "beta" } else { "alpha" };
        assert!(
            lines
                .iter()
                .any(|l| l.contains("task started") && l.contains(me)),
            "{title}: {lines:?}"
        );
        assert!(
            !lines.iter().any(|l| l.contains(&format!("task={other}"))
                || l.contains(&format!("task=\"{other}\""))),
            "{title} holds {other}'s log: {lines:?}"
        );
    }
    assert!(
        !commands
            .iter()
            .any(|c| c.starts_with("::set-output") || c.contains("from alpha check")),
        "model or check text reached the command channel: {commands:?}"
    );
    mock.assert_clean();
}

#[test]
fn github_actions_groups_hold_each_tasks_patch_and_commit_lines() {
    let repo = TestRepo::new();
    let git = "permissions:\n  mode: acceptEdits\ngit:\n  branch: true\n";
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", git));
    let b = write_spec_named(repo.path(), "b.yaml", &named_task("beta", git));
    let write = serde_json::json!({"file_path": format!("{WORKDIR}/new.txt"), "content": "new\n"});
    let mock = MockAnthropic::start_each(
        vec![tool_turn("toolu_w", "Write", write), text_turn("done")],
        2,
    );
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .args(["--jobs", "2"])
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(0);
    let (_, groups) = actions_view(&run.stderr);
    for name in ["alpha", "beta"] {
        let (_, lines) = groups
            .iter()
            .find(|(t, _)| t.starts_with(name))
            .unwrap_or_else(|| panic!("no group for {name}: {}", run.stderr));
        for what in ["task changes written as a patch", "changes committed"] {
            assert!(
                lines.iter().any(|l| l.contains(what)),
                "{name}'s group lacks `{what}`: {lines:?}\n{}",
                run.stderr
            );
        }
    }
    mock.assert_clean();
}

#[test]
fn github_actions_single_task_streams_its_group_live() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &task("solo", ""));
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .arg(&spec)
        .run();
    run.expect_code(0);
    let (_, groups) = actions_view(&run.stderr);
    assert_eq!(groups.len(), 1, "{}", run.stderr);
    assert_eq!(groups[0].0, "solo");
    assert!(groups[0].1.iter().any(|l| l.contains("task finished")));
}
