//! Spec errors as a person reads them: the source line with a caret under the offending token,
//! "did you mean" for misspelt keys, values and tools, YAML syntax errors where the mistake is,
//! numbers too large for their field, and errors of command-line flags blamed on the flag.

use crate::support::*;

/// What `runner validate task.yaml` prints on stderr for a spec with this text, without the
/// closing "N errors found ...; nothing was run" line (it carries a timestamp).
fn rendered(yaml: &str) -> String {
    let repo = TestRepo::new();
    write_spec(repo.path(), yaml);
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["validate", "task.yaml"])
        .run();
    run.expect_code(2);
    run.stderr
        .lines()
        .filter(|l| !l.contains("nothing was run"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn unknown_key_is_shown_with_a_suggestion() {
    insta::assert_snapshot!(rendered("name: t\nprompt: hi\nlimits:\n  max_turn: 30\n"));
}

#[test]
fn unknown_enum_value_is_shown_with_a_suggestion() {
    insta::assert_snapshot!(rendered(
        "name: t\nprompt: hi\npermissions:\n  mode: dontask\n"
    ));
}

#[test]
fn unknown_tool_is_shown_with_a_suggestion() {
    insta::assert_snapshot!(rendered("name: t\nprompt: hi\ntools: [Read, Bashh]\n"));
}

#[test]
fn unterminated_quote_is_reported_where_it_starts() {
    let out = rendered("name: t\nprompt: \"fix the tests\nlimits:\n  max_turns: 3\n\n");
    assert!(out.contains("task.yaml:2:9: "), "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn a_number_too_large_says_so() {
    insta::assert_snapshot!(rendered(
        "name: t\nprompt: hi\nlimits:\n  max_total_tokens: 99999999999999999999999\n  max_turns: 5000000000\n"
    ));
}

#[test]
fn a_bad_rule_in_the_spec_is_named_once() {
    let out = rendered("name: t\nprompt: hi\npermissions:\n  allow: [\"Bash(\"]\n");
    assert_eq!(out.matches("invalid permission rule").count(), 1, "{out}");
    insta::assert_snapshot!(out);
}

#[test]
fn a_bad_rule_on_the_command_line_is_the_flags() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "--allowed-tools", "Read Bash("])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("--allowed-tools: invalid permission rule `Bash(`: the specifier must end"),
        "{}",
        run.stderr
    );
    assert!(!run.stderr.contains("task.yaml"), "{}", run.stderr);
    assert_eq!(
        run.stderr.matches("invalid permission rule").count(),
        1,
        "{}",
        run.stderr
    );
}

#[test]
fn an_override_that_cannot_apply_is_the_flags() {
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["exec", "--model", "my-local-model", "--max-cost-usd", "1"])
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("--max-cost-usd (applied to ")
            && run.stderr.contains("`my-local-model` has no price"),
        "{}",
        run.stderr
    );
}

#[test]
fn json_logs_carry_spec_errors_as_events() {
    let repo = TestRepo::new();
    write_spec(
        repo.path(),
        "name: t\nprompt: hi\nlimits:\n  max_turn: 30\n",
    );
    let run = Runner::new()
        .current_dir(repo.path())
        .env("RUNNER_LOG_FORMAT", "json")
        .args(["validate", "task.yaml"])
        .run();
    run.expect_code(2);
    let first: serde_json::Value =
        serde_json::from_str(run.stderr.lines().next().unwrap()).unwrap();
    assert_eq!(first["level"], "ERROR");
    assert_eq!(first["fields"]["line"], 4);
    assert_eq!(first["fields"]["help"], "did you mean `max_turns`?");
}

#[test]
fn validate_lists_every_error_of_every_file() {
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    let specs = [
        (
            "key.yaml",
            "name: key\nprompt: hi\nlimits:\n  max_turn: 3\n",
            "did you mean `max_turns`",
        ),
        (
            "type.yaml",
            "name: type\nprompt: hi\nlimits:\n  max_turns: ten\n",
            "e.g. `max_turns: 20`",
        ),
        (
            "indent.yaml",
            "name: indent\nprompt: hi\n  limits: 3\n",
            "line 3 is indented more than line 2",
        ),
        (
            "model.yaml",
            "name: model\nprompt: hi\nmodel: claude-sonet-4-5\n",
            "did you mean `claude-sonnet-4-5`",
        ),
        (
            "tool.yaml",
            "name: tool\nprompt: hi\ntools: [Bashh]\n",
            "did you mean `Bash`",
        ),
        ("noprompt.yaml", "name: noprompt\n", "prompt"),
        (
            "rule.yaml",
            "name: rule\nprompt: hi\npermissions:\n  allow: [\"Bash(git diff *\"]\n",
            "the closest valid rule: `Bash(git diff *)`",
        ),
        (
            "cost.yaml",
            "name: cost\nprompt: hi\nmodel: my-model\nlimits:\n  max_cost_usd: 1\n",
            "needs a priced model",
        ),
    ];
    for (file, yaml, _) in specs {
        write_spec_named(&dir, file, yaml);
    }
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["validate", "tasks"])
        .run();
    run.expect_code(2);
    for (file, _, says) in specs {
        assert!(
            run.stderr.contains(&format!("{file}:")),
            "{file}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(says), "{file} ({says}): {}", run.stderr);
    }
    assert!(
        run.stderr.contains("8 errors found in 8 files"),
        "{}",
        run.stderr
    );
    // With a cost limit the caret is on the `model:` line of the unpriced model.
    assert!(run.stderr.contains("cost.yaml:3:1: "), "{}", run.stderr);
}

#[test]
fn validate_lists_every_error_within_a_file() {
    let out = rendered(
        "name: many\nprompt: hi\nmodel: claude-sonet-4-5\nworkdir: nowhere\nlimits:\n  max_turns: ten\n  max_turn: 3\ntools: [Read, Bashh]\npermissions:\n  allow: [\"bash(ls)\", \"Bash(git diff *\"]\nverify:\n  - run: \"\"\n    timout: 5\nattempts: 0\n",
    );
    for (at, says) in [
        ("task.yaml:3:1: ", "did you mean `claude-sonnet-4-5`"),
        ("task.yaml:4:1: ", "workdir nowhere"),
        ("task.yaml:6:", "e.g. `max_turns: 20`"),
        ("task.yaml:7:3: ", "did you mean `max_turns`"),
        ("task.yaml:8:", "did you mean `Bash`"),
        ("task.yaml:10:", "the closest valid rule: `Bash(ls)`"),
        (
            "task.yaml:10:",
            "the closest valid rule: `Bash(git diff *)`",
        ),
        ("task.yaml:12:", "`run` is empty"),
        ("task.yaml:13:5: ", "did you mean `timeout`"),
        ("task.yaml:14:1: ", "`attempts` is 0"),
    ] {
        assert!(
            out.contains(at) && out.contains(says),
            "{at} {says}:\n{out}"
        );
    }
    assert_eq!(out.matches("error: ").count(), 10, "{out}");
    // In the order of the file, each with its caret.
    let lines: Vec<usize> = out
        .lines()
        .filter_map(|l| l.strip_prefix("error: task.yaml:"))
        .filter_map(|l| l.split(':').next()?.parse().ok())
        .collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{lines:?}");
    assert!(out.matches('^').count() >= 10, "{out}");
}

#[test]
fn paths_and_globs_that_match_nothing_name_the_closest_existing_path() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.path().join("crates/core")).unwrap();
    let tasks = repo.path().join("tasks");
    std::fs::create_dir(&tasks).unwrap();
    write_spec_named(
        &tasks,
        "per-crate.yaml",
        "name: \"lint-{{basename}}\"\nprompt: hi\nmatrix:\n  glob: \"../crate/*\"\n",
    );
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["validate", "tasks/per-crate.yaml"])
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("matched nothing under")
            && run
                .stderr
                .contains("(the closest existing path: `../crates/*`)"),
        "{}",
        run.stderr
    );
    let run = Runner::new()
        .current_dir(repo.path())
        .args(["validate", "task/per-crate.yml"])
        .run();
    run.expect_code(2);
    assert!(
        run.stderr
            .contains("help: did you mean `tasks/per-crate.yaml`?"),
        "{}",
        run.stderr
    );
}
