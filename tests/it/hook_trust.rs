//! Hooks and MCP servers through the real binary with code planted in the workdir: a
//! `json.py` the pull request adds is not imported by a hook's or a server's `python3 -c`
//! (they run outside the workdir, with `PYTHONSAFEPATH`), and launchers that find their code
//! for themselves (`python3 -c`, `node -e`, `npx`) are refused a secret unless pinned.

use serde_json::json;

use crate::support::*;

const PLANTED_JSON: &str = "import os\nopen(os.path.join(os.path.dirname(os.path.abspath(__file__)), 'planted.ran'), 'w').write('ran')\ndef dumps(*a, **k):\n    return '{}'\n";

fn spec(extra: &str) -> String {
    format!("name: trust\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\n{extra}")
}

/// A repository whose root holds a `json.py` that leaves `planted.ran` when imported.
fn planted_repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("json.py", PLANTED_JSON);
    repo.commit_all("json module");
    repo
}

/// A PreToolUse hook on Bash, `hook` as its command and `extra` YAML lines under it.
fn bash_hook(hook: &str, extra: &str) -> String {
    format!(
        "permissions:\n  allow: [Bash]\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: {hook:?}\n{extra}"
    )
}

/// A hook that denies every Bash call through Python's `json`.
const DENY_WITH_PYTHON: &str = r#"python3 -c 'import json; print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no shell from python"}}))'"#;

#[test]
fn a_python_hook_does_not_import_the_workdirs_modules() {
    for extra in ["", "          cwd: .\n          trusted: true\n"] {
        let repo = planted_repo();
        let mock = MockAnthropic::start(vec![
            tool_turn("t1", "Bash", json!({"command": "touch x.txt"})),
            text_turn("done"),
        ]);
        let out = OutDir::new();
        let spec = write_spec(repo.path(), &spec(&bash_hook(DENY_WITH_PYTHON, extra)));
        // An inherited PYTHONPATH into the workdir is not passed on.
        let run = exec(&mock, &repo, &out)
            .json()
            .env("PYTHONPATH", repo.path())
            .arg(&spec)
            .run();
        run.expect_code(0);
        let denied = mock.request(1).tool_result_text("t1").unwrap();
        assert!(denied.contains("no shell from python"), "{extra}: {denied}");
        assert!(!repo.exists("x.txt"));
        assert!(
            !repo.exists("planted.ran"),
            "{extra}: the hook imported the workdir's json.py"
        );
        mock.assert_clean();
    }
}

#[test]
fn a_hook_inside_the_workdir_needs_trusted() {
    let repo = planted_repo();
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &spec(&bash_hook(DENY_WITH_PYTHON, "          cwd: .\n")),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("runs inside the workdir"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("trusted: true"), "{}", run.stderr);
    assert_eq!(mock.served(), 0);
}

#[test]
fn launchers_get_no_secret_unless_pinned() {
    let repo = planted_repo();
    for hook in [
        "node -e 'process.exit(0)'",
        "python3 -c 'import json'",
        "/usr/bin/env python3 -c 'import json'",
        "sh -c 'npx -y some-linter'",
        "npm exec -- some-linter",
    ] {
        let mock = MockAnthropic::start(vec![]);
        let out = OutDir::new();
        let yaml = spec(&format!(
            "secrets: [HOOK_TOKEN]\n{}",
            bash_hook(hook, "          env_passthrough: [HOOK_TOKEN]\n")
        ));
        let spec = write_spec(repo.path(), &yaml);
        let run = exec(&mock, &repo, &out)
            .json()
            .env("HOOK_TOKEN", "hook-token-value")
            .arg(&spec)
            .run();
        run.expect_code(2);
        assert!(
            run.stderr.contains("env_passthrough"),
            "{hook}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains("cannot receive secrets"),
            "{hook}: {}",
            run.stderr
        );
        assert_eq!(mock.served(), 0);
    }
    // Pinned: Python's isolated mode gets the secret, and still no workdir module.
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "touch x.txt"})),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let isolated = r#"python3 -I -c 'import json, os; print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "token " + str(len(os.environ.get("HOOK_TOKEN", "")))}}))'"#;
    let yaml = spec(&format!(
        "secrets: [HOOK_TOKEN]\n{}",
        bash_hook(isolated, "          env_passthrough: [HOOK_TOKEN]\n")
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out)
        .json()
        .env("HOOK_TOKEN", "hook-token-value")
        .arg(&spec)
        .run();
    run.expect_code(0);
    let denied = mock.request(1).tool_result_text("t1").unwrap();
    assert!(denied.contains("token 16"), "{denied}");
    assert!(!repo.exists("planted.ran"));
    mock.assert_clean();
}

/// An MCP server started through `python3 <flags> -c` that imports `json` and then runs the
/// test support's stub server.
fn python_server(flags: &str, extra: &[&str]) -> String {
    let code = format!(
        "import json, os; os.execvp('bash', ['bash', {:?}])",
        mcp_stub().display().to_string()
    );
    let mut args: Vec<String> = flags.split_whitespace().map(String::from).collect();
    args.extend(["-c".to_string(), code]);
    let mut s = format!(
        "mcp_servers:\n  py:\n    command: python3\n    args: {}\n    required: true\n",
        serde_json::to_string(&args).unwrap()
    );
    for line in extra {
        s.push_str(&format!("    {line}\n"));
    }
    s
}

#[test]
fn an_mcp_server_does_not_import_the_workdirs_modules() {
    let repo = planted_repo();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("t_safe", "mcp__py__env", json!({"var": "PYTHONSAFEPATH"}))
            .tool_use("t_path", "mcp__py__env", json!({"var": "PYTHONPATH"}))
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = spec(&format!(
        "{}permissions:\n  allow: [mcp__py]\n",
        python_server("", &[])
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out)
        .json()
        .env("PYTHONPATH", repo.path())
        .arg(&spec)
        .run();
    run.expect_code(0);
    assert_eq!(
        mock.request(1).tool_result_text("t_safe").as_deref(),
        Some("1")
    );
    assert_eq!(
        mock.request(1).tool_result_text("t_path").as_deref(),
        Some("(unset)")
    );
    assert!(
        !repo.exists("planted.ran"),
        "the server imported the workdir's json.py"
    );
    mock.assert_clean();
}

#[test]
fn an_mcp_server_gets_a_secret_only_when_pinned() {
    let repo = planted_repo();
    let token = ["env: {TOKEN: \"${MCP_TOKEN}\"}"];
    for (yaml, what) in [
        (python_server("", &token), "python3 -c"),
        (python_server("-I", &[token[0], "cwd: ."]), "runs inside the workdir"),
        (
            // The example the docs used to show: the pull request's node_modules could
            // provide the package.
            "mcp_servers:\n  github:\n    command: npx\n    args: [\"-y\", \"@modelcontextprotocol/server-github\"]\n    env: {GITHUB_PERSONAL_ACCESS_TOKEN: \"${MCP_TOKEN}\"}\n".to_string(),
            "pkg@1.2.3",
        ),
    ] {
        let mock = MockAnthropic::start(vec![]);
        let out = OutDir::new();
        let spec = write_spec(repo.path(), &spec(&yaml));
        let run = exec(&mock, &repo, &out)
            .json()
            .env("MCP_TOKEN", "mcp-token-value")
            .arg(&spec)
            .run();
        run.expect_code(2);
        assert!(run.stderr.contains(what), "{what}: {}", run.stderr);
        assert!(run.stderr.contains("${MCP_TOKEN}"), "{}", run.stderr);
        assert_eq!(mock.served(), 0);
    }
    // Pinned with isolated mode, outside the workdir: it starts and gets its secret.
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "mcp__py__env", json!({"var": "TOKEN"})),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = spec(&format!(
        "{}permissions:\n  allow: [mcp__py]\n",
        python_server("-I", &token)
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out)
        .json()
        .env("MCP_TOKEN", "mcp-token-value")
        .arg(&spec)
        .run();
    run.expect_code(0);
    let got = mock.request(1).tool_result_text("t1").unwrap();
    // Redacted before the model sees it: the server got the value.
    assert!(!got.contains("(unset)") && !got.is_empty(), "{got}");
    assert!(!repo.exists("planted.ran"));
    mock.assert_clean();
}
