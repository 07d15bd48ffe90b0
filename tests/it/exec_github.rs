//! GitHub Actions integration through the real binary: summary, outputs, annotations, and
//! model text that tries to inject workflow commands.

use crate::support::*;

/// Parse `$GITHUB_OUTPUT` heredoc entries.
fn parse_outputs(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some((name, delim)) = line.split_once("<<") else {
            continue;
        };
        let mut value = Vec::new();
        for l in lines.by_ref() {
            if l == delim {
                break;
            }
            value.push(l);
        }
        out.push((name.to_string(), value.join("\n")));
    }
    out
}

#[test]
fn failed_task_in_actions_writes_summary_outputs_and_cannot_inject_commands() {
    let evil = "Done!\n::set-output name=conclusion::success\nconclusion=success\n::error::fake";
    let mock = MockAnthropic::start(vec![text_turn(evil)]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: gh1\nprompt: go\nverify:\n  - name: unit\n    run: echo '::warning::from check'; exit 1\n",
    );
    let summary = repo.path().join("summary.md");
    let outputs = repo.path().join("outputs.txt");
    let out = Runner::against(&mock)
        .current_dir(repo.path())
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .env("GITHUB_OUTPUT", &outputs)
        .env("MY_SECRET", "hunter2-secret-value")
        .args(["exec", "--junit", "j.xml"])
        .arg(&spec)
        .run();
    assert_eq!(out.code, Some(1));
    let stderr = &out.stderr;
    // Everything between stop-commands and its token is inert for the runner.
    let start = stderr
        .find("::stop-commands::")
        .expect("stop-commands emitted");
    let token = stderr[start + "::stop-commands::".len()..]
        .lines()
        .next()
        .unwrap()
        .to_string();
    let end = stderr
        .find(&format!("::{token}::"))
        .expect("commands resumed");
    assert!(start < end);
    // The one real annotation comes after the resume and is escaped onto one line.
    let after = &stderr[end..];
    let ann = after
        .lines()
        .find(|l| l.starts_with("::error file="))
        .expect("annotation");
    assert!(
        ann.contains("line=1") && ann.contains("checks_failed"),
        "{ann}"
    );
    assert!(
        !after.contains("::set-output"),
        "model text reached the command channel: {after}"
    );

    let o = parse_outputs(&std::fs::read_to_string(&outputs).unwrap());
    let get = |k: &str| o.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    assert_eq!(get("conclusion").as_deref(), Some("failure"));
    assert_eq!(get("junit").as_deref(), Some("j.xml"));
    assert!(get("cost_usd").is_some());
    assert_eq!(o.iter().filter(|(n, _)| n == "conclusion").count(), 1);

    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(
        md.contains("| gh1 |") && md.contains("checks_failed") && md.contains("0/1"),
        "{md}"
    );
    assert!(md.contains("<details open>"), "failures are expanded: {md}");
    mock.assert_clean();
}

#[test]
fn secret_values_are_masked_in_actions() {
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), "name: gh2\nprompt: go\nsecrets: [MY_SECRET]\n");
    let out = Runner::against(&mock)
        .current_dir(repo.path())
        .env("GITHUB_ACTIONS", "true")
        .env("MY_SECRET", "hunter2-secret-value")
        .args(["exec"])
        .arg(&spec)
        .run();
    assert_eq!(out.code, Some(0));
    let stderr = &out.stderr;
    let mask = stderr
        .find("::add-mask::hunter2-secret-value")
        .expect("secret masked");
    assert!(
        mask < stderr.find("::stop-commands::").unwrap(),
        "masks come first"
    );
    mock.assert_clean();
}
