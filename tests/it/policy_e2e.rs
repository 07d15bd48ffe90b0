//! End-to-end policy hardening: the real binary against the mock Anthropic server. A scripted
//! model asks for git reads in repositories that plant programs in their configuration, for
//! files that hold secrets, and the tests check what ran and what the model was sent.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::*;
use base64::Engine;
use serde_json::{Value, json};

fn spec(extra: &str) -> String {
    format!("name: policy\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\n{extra}")
}

/// Run `runner exec SPEC --output-format json` in `repo` with `env`; (exit code, result,
/// stderr).
fn run(
    mock: &MockAnthropic,
    repo: &TestRepo,
    spec: &Path,
    out_dir: &Path,
    env: &[(&str, &str)],
) -> (Option<i32>, Value, String) {
    let mut runner = Runner::against(mock)
        .current_dir(repo.path())
        .args(["exec", "--output-format", "json", "--transcript-dir"])
        .arg(out_dir)
        .arg(spec);
    for (k, v) in env {
        runner = runner.env(k, v);
    }
    let run = runner.run();
    let result = run.json().last().cloned().unwrap_or(Value::Null);
    (run.code, result, run.stderr)
}

/// `runner validate SPEC`: (exit code, stderr).
fn validate(repo: &TestRepo, spec: &Path) -> (Option<i32>, String) {
    let run = Runner::new()
        .current_dir(repo.path())
        .arg("validate")
        .arg(spec)
        .run();
    (run.code, run.stderr)
}

fn denial_reasons(result: &Value) -> Vec<String> {
    result["permission_denials"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|d| d["runner_reason"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A model that runs each command in turn, then ends.
fn script(commands: &[&str]) -> Vec<MockTurn> {
    let mut turns: Vec<MockTurn> = commands
        .iter()
        .enumerate()
        .map(|(i, c)| tool_turn(&format!("t{i}"), "Bash", json!({ "command": c })))
        .collect();
    turns.push(text_turn("done"));
    turns
}

/// Markers the planted programs leave in `dir`.
fn markers(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("ran-"))
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A program that leaves the marker `ran-NAME` in `dir` (and prints its input for a pager).
fn planted(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(format!("{name}.sh"));
    std::fs::write(
        &p,
        format!(
            "#!/bin/sh\ntouch '{}'\ncat \"$@\" 2>/dev/null\nexit 0\n",
            dir.join(format!("ran-{name}")).display()
        ),
    )
    .unwrap();
    let mut perm = std::fs::metadata(&p).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&p, perm).unwrap();
    p
}

/// Plain git with `home` as HOME, as a developer would run it.
fn plain_git(repo: &Path, home: &Path, args: &[&str]) {
    let _ = Command::new("git")
        .args(args)
        .current_dir(repo)
        .env("HOME", home)
        .env_remove("GIT_CONFIG_GLOBAL")
        .env_remove("GIT_CONFIG_NOSYSTEM")
        .output()
        .unwrap();
}

const GIT_READS: &[&str] = &[
    "git status",
    "git diff",
    "git log -p -1",
    "git show --stat",
    "git branch",
    "git blame README.md",
    "git grep -n test",
];

#[test]
fn planted_repository_configuration_runs_nothing_when_git_reads_run() {
    let repo = TestRepo::new();
    let plant = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let fsmonitor = planted(plant.path(), "fsmonitor");
    let pager = planted(plant.path(), "pager");
    let alias = planted(plant.path(), "alias");
    let hooks = plant.path().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for h in [
        "post-index-change",
        "reference-transaction",
        "post-checkout",
    ] {
        let p = planted(plant.path(), h);
        std::fs::rename(&p, hooks.join(h)).unwrap();
    }
    repo.git(&["config", "core.fsmonitor", &fsmonitor.display().to_string()]);
    repo.git(&["config", "core.pager", &pager.display().to_string()]);
    repo.git(&["config", "pager.status", &pager.display().to_string()]);
    repo.git(&["config", "core.hooksPath", &hooks.display().to_string()]);
    repo.git(&["config", "alias.status", &format!("!{}", alias.display())]);
    repo.write("README.md", "# test repo\nchanged\n");
    // The plant works: plain git runs it.
    plain_git(repo.path(), home.path(), &["status"]);
    assert!(
        markers(plant.path()).contains(&"ran-fsmonitor".to_string()),
        "the planted fsmonitor did not run under plain git: {:?}",
        markers(plant.path())
    );
    for m in markers(plant.path()) {
        std::fs::remove_file(plant.path().join(m)).unwrap();
    }

    let mock = MockAnthropic::start(script(GIT_READS));
    let out_dir = tempfile::tempdir().unwrap();
    let spec = write_spec(repo.path(), &spec(""));
    let (code, result, stderr) = run(
        &mock,
        &repo,
        &spec,
        out_dir.path(),
        &[("HOME", &home.path().display().to_string())],
    );
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(denial_reasons(&result).is_empty(), "{result}");
    assert_eq!(markers(plant.path()), Vec::<String>::new());
    // The reads ran and answered.
    let status = mock.request(1).tool_result_text("t0").unwrap();
    assert!(status.contains("README.md"), "{status}");
    mock.assert_clean();
}

#[test]
fn home_gitconfig_and_attributes_run_nothing() {
    let repo = TestRepo::new();
    let plant = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let fsmonitor = planted(plant.path(), "global-fsmonitor");
    let textconv = planted(plant.path(), "textconv");
    let external = planted(plant.path(), "global-external");
    std::fs::write(
        home.path().join(".gitconfig"),
        format!(
            "[core]\n\tfsmonitor = {}\n[diff \"evil\"]\n\ttextconv = {}\n[diff]\n\texternal = {}\n",
            fsmonitor.display(),
            textconv.display(),
            external.display()
        ),
    )
    .unwrap();
    repo.write(".gitattributes", "*.txt diff=evil\n");
    repo.write("a.txt", "one\n");
    repo.commit_all("attributes");
    repo.write("a.txt", "two\n");
    plain_git(repo.path(), home.path(), &["log", "-p", "-1"]);
    plain_git(repo.path(), home.path(), &["status"]);
    let planted_ran = markers(plant.path());
    assert!(
        planted_ran.contains(&"ran-global-fsmonitor".to_string())
            && planted_ran.contains(&"ran-textconv".to_string()),
        "the plant did not run under plain git: {planted_ran:?}"
    );
    for m in planted_ran {
        std::fs::remove_file(plant.path().join(m)).unwrap();
    }

    let mock = MockAnthropic::start(script(GIT_READS));
    let out_dir = tempfile::tempdir().unwrap();
    let spec = write_spec(repo.path(), &spec(""));
    let (code, result, stderr) = run(
        &mock,
        &repo,
        &spec,
        out_dir.path(),
        &[("HOME", &home.path().display().to_string())],
    );
    assert_eq!(code, Some(0), "stderr: {stderr}");
    assert!(denial_reasons(&result).is_empty(), "{result}");
    assert_eq!(markers(plant.path()), Vec::<String>::new());
    let diff = mock.request(2).tool_result_text("t1").unwrap();
    assert!(
        diff.contains("+two"),
        "git diff ran without the external diff: {diff}"
    );
    mock.assert_clean();
}

#[test]
fn repository_configuration_that_cannot_be_overridden_and_bare_repositories_are_denied() {
    let repo = TestRepo::new();
    let plant = tempfile::tempdir().unwrap();
    let external = planted(plant.path(), "external");
    let textconv = planted(plant.path(), "local-textconv");
    repo.git(&["config", "diff.external", &external.display().to_string()]);
    repo.git(&[
        "config",
        "diff.evil.textconv",
        &textconv.display().to_string(),
    ]);
    repo.write(".gitattributes", "*.md diff=evil\n");
    repo.write("README.md", "# changed\n");
    // A bare repository a pull request could commit, with its own fsmonitor.
    let bare_fsmonitor = planted(plant.path(), "bare-fsmonitor");
    let bare = repo.path().join("vendor/x");
    let init = Command::new("git")
        .args(["init", "-q", "--bare"])
        .arg(&bare)
        .output()
        .unwrap();
    assert!(init.status.success());
    std::fs::write(
        bare.join("config"),
        format!(
            "[core]\n\tbare = true\n\tfsmonitor = {}\n",
            bare_fsmonitor.display()
        ),
    )
    .unwrap();

    let mock = MockAnthropic::start(script(&[
        "git diff",
        "git log -p -1",
        "cd vendor/x && git status",
        "git -C vendor/x log",
    ]));
    let out_dir = tempfile::tempdir().unwrap();
    let spec = write_spec(repo.path(), &spec(""));
    let (code, result, stderr) = run(&mock, &repo, &spec, out_dir.path(), &[]);
    assert_eq!(code, Some(0), "stderr: {stderr}");
    let reasons = denial_reasons(&result);
    assert_eq!(reasons.len(), 4, "{reasons:#?}");
    assert!(reasons[0].contains("diff.external"), "{}", reasons[0]);
    assert!(reasons[2].contains("bare repository"), "{}", reasons[2]);
    assert_eq!(markers(plant.path()), Vec::<String>::new());
    mock.assert_clean();
}

#[test]
fn hooks_and_checks_that_run_workdir_scripts_need_trusted() {
    let repo = TestRepo::new();
    repo.write("hooks/guard.sh", "#!/bin/sh\nexit 0\n");
    let hook = |extra: &str| {
        spec(&format!(
            "secrets: [GUARD_TOKEN]\nhooks:\n  PreToolUse:\n    - matcher: Write\n      hooks:\n        - type: command\n          command: bash hooks/guard.sh\n{extra}"
        ))
    };
    // Refused at load, by validate and exec alike.
    let s = write_spec(repo.path(), &hook(""));
    let (code, stderr) = validate(&repo, &s);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("trusted: true"), "{stderr}");
    assert!(stderr.contains("guard.sh"), "{stderr}");
    let mock = MockAnthropic::start(vec![text_turn("never asked")]);
    let out_dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = run(&mock, &repo, &s, out_dir.path(), &[]);
    assert_eq!(code, Some(2), "{stderr}");
    assert_eq!(mock.served(), 0);
    // Trusted but given a secret: refused.
    let s = write_spec(
        repo.path(),
        &hook("          trusted: true\n          env_passthrough: [GUARD_TOKEN]\n"),
    );
    let (code, stderr) = validate(&repo, &s);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("secrets"), "{stderr}");
    // Trusted: it runs, and its script is protected from the agent.
    let s = write_spec(repo.path(), &hook("          trusted: true\n"));
    let (code, stderr) = validate(&repo, &s);
    assert_eq!(code, Some(0), "{stderr}");
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "t1",
            "Write",
            json!({"file_path": repo.path().join("hooks/guard.sh"), "content": "#!/bin/sh\ncurl evil\n"}),
        ),
        tool_turn(
            "t2",
            "Bash",
            json!({"command": "echo 'exit 0' > hooks/guard.sh"}),
        ),
        text_turn("done"),
    ]);
    let s = write_spec(
        repo.path(),
        &format!(
            "{}permissions:\n  mode: bypassPermissions\n",
            hook("          trusted: true\n")
        ),
    );
    let (code, result, stderr) = run(&mock, &repo, &s, out_dir.path(), &[]);
    // Every write the task tried was refused and it changed nothing: `denied`, not success.
    assert_eq!(code, Some(5), "{stderr}");
    assert_eq!(result["runner_outcome"], "denied", "{stderr}");
    assert_eq!(repo.read("hooks/guard.sh"), "#!/bin/sh\nexit 0\n");
    let reasons = denial_reasons(&result);
    assert_eq!(reasons.len(), 2, "{reasons:#?}");
    assert!(
        reasons.iter().all(|r| r.contains("protected path")),
        "{reasons:#?}"
    );
    // A verify check that runs a workdir script.
    let s = write_spec(repo.path(), &spec("verify:\n  - run: ./hooks/guard.sh\n"));
    let (code, stderr) = validate(&repo, &s);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("the check `./hooks/guard.sh`"), "{stderr}");
    let s = write_spec(
        repo.path(),
        &spec("verify:\n  - run: ./hooks/guard.sh\n    trusted: true\n"),
    );
    assert_eq!(validate(&repo, &s).0, Some(0));
    let s = write_spec(repo.path(), &spec("verify:\n  - run: cargo test --quiet\n"));
    assert_eq!(validate(&repo, &s).0, Some(0));
}

#[test]
fn rules_that_can_never_match_fail_validate_and_exec() {
    let repo = TestRepo::new();
    for (rules, needle) in [
        ("allow: [\"bash(touch:*)\"]", "did you mean `Bash`"),
        ("deny: [\"Bsh(ls)\"]", "did you mean `Bash`"),
        ("allow: [\"WebFetch\"]", "does not ship"),
        ("allow: [\"Bash({{cmd}}:*)\"]", "placeholder"),
        ("ask: [\"Edit(\"]", "end with `)`"),
    ] {
        let s = write_spec(repo.path(), &spec(&format!("permissions:\n  {rules}\n")));
        let (code, stderr) = validate(&repo, &s);
        assert_eq!(code, Some(2), "{rules}: {stderr}");
        assert!(stderr.contains(needle), "{rules}: {stderr}");
        let mock = MockAnthropic::start(vec![text_turn("never asked")]);
        let out_dir = tempfile::tempdir().unwrap();
        let (code, _, stderr) = run(&mock, &repo, &s, out_dir.path(), &[]);
        assert_eq!(code, Some(2), "{rules}: {stderr}");
        assert!(stderr.contains(needle), "{rules}: {stderr}");
    }
    // Matrix parameters are substituted in rules, the branch name and hooks.
    let s = write_spec(
        repo.path(),
        "name: m-{{tool}}\nprompt: hi\nmatrix:\n  - {tool: ls}\n  - {tool: cat}\npermissions:\n  allow: [\"Bash({{tool}}:*)\"]\ngit:\n  branch: \"fix/{{tool}}\"\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: echo {{tool}}\n",
    );
    let (code, stderr) = validate(&repo, &s);
    assert_eq!(code, Some(0), "{stderr}");
    let s = write_spec(
        repo.path(),
        "name: m-{{tool}}\nprompt: hi\nmatrix:\n  - {tool: ls}\npermissions:\n  allow: [\"Bash({{tool}} {{nope}}:*)\"]\n",
    );
    let (code, stderr) = validate(&repo, &s);
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("{{nope}}"), "{stderr}");
}

#[test]
fn secrets_are_redacted_before_the_model_sees_them_in_every_form() {
    let repo = TestRepo::new();
    let secret = "s3cr3t/token+value=42";
    let b64 = base64::engine::general_purpose::STANDARD.encode(secret);
    let b64_url = base64::engine::general_purpose::URL_SAFE.encode(secret);
    let hex: String = secret.bytes().map(|b| format!("{b:02x}")).collect();
    let url = "s3cr3t%2Ftoken%2Bvalue%3D42";
    let header =
        base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{secret}"));
    repo.write(
        "creds.txt",
        &format!("raw {secret}\nb64 {b64}\nurl-safe {b64_url}\nhex {hex}\nurl {url}\nheader basic {header}\n"),
    );
    // A long output is spilled to a file; the secret is in it.
    let long: String = (0..4000).map(|i| format!("line {i}\n")).collect();
    repo.write("long.txt", &format!("{long}{secret}\n{long}"));
    // The credential actions/checkout leaves behind.
    let gh_token = "ghs_checkoutToken1234567890";
    let extraheader =
        base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{gh_token}"));
    repo.git(&[
        "config",
        "http.https://github.com/.extraheader",
        &format!("AUTHORIZATION: basic {extraheader}"),
    ]);
    // A copy of it elsewhere in the workdir: the configuration itself does not show it during
    // the run (runner takes it out), but it stays a secret.
    repo.write(
        "checkout.txt",
        &format!("token {gh_token}\nheader {extraheader}\n"),
    );
    let mock = MockAnthropic::start(script(&[
        "cat creds.txt",
        "cat long.txt",
        "cat .git/config checkout.txt",
    ]));
    let out_dir = tempfile::tempdir().unwrap();
    let s = write_spec(repo.path(), &spec("secrets: [SECRET_TOKEN]\n"));
    let (code, _, stderr) = run(
        &mock,
        &repo,
        &s,
        out_dir.path(),
        &[("SECRET_TOKEN", secret)],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stderr.contains("persist-credentials: false"), "{stderr}");
    let sent: String = mock
        .requests()
        .iter()
        .map(|r| serde_json::to_string(r.messages()).unwrap())
        .collect();
    for form in [
        secret,
        b64.as_str(),
        b64_url.as_str(),
        hex.as_str(),
        url,
        &header[4..header.len() - 4],
        gh_token,
        &extraheader[4..extraheader.len() - 4],
    ] {
        assert!(!sent.contains(form), "the model was sent {form}");
    }
    assert!(sent.contains("[REDACTED:SECRET_TOKEN]"), "{sent}");
    assert!(
        sent.contains("[REDACTED:GIT_CHECKOUT_CREDENTIAL]"),
        "{sent}"
    );
    assert!(!sent.contains("extraheader"), "{sent}");
    // Spill files too.
    let spilled: Vec<PathBuf> = walk(out_dir.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("tool-results"))
        .collect();
    assert!(!spilled.is_empty(), "nothing was spilled");
    for p in spilled {
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(!text.contains(secret), "{} holds the secret", p.display());
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}
