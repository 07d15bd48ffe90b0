//! Hook outcomes: exit codes, JSON decisions, matchers, `if`, timeouts, environment.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use super::*;

fn hooks(event: &str, matcher: Option<&str>, command: &str, extra: Value) -> Hooks {
    let mut handler = json!({"type": "command", "command": command});
    if let (Some(h), Some(e)) = (handler.as_object_mut(), extra.as_object()) {
        h.extend(e.clone());
    }
    let cfg: HooksConfig = serde_json::from_value(json!({
        event: [{"matcher": matcher, "hooks": [handler]}]
    }))
    .unwrap();
    let dir = std::env::temp_dir();
    Hooks::new(&cfg).unwrap().with_session(
        HookSession {
            session_id: "s1".into(),
            transcript_path: dir.join("t.jsonl"),
            permission_mode: "dontAsk".into(),
            workdir: dir,
            stop: Default::default(),
        },
        ChildPolicy {
            remove: vec!["HOME".into()],
            ..ChildPolicy::default()
        },
    )
}

async fn pre(h: &Hooks, tool: &str, input: Value) -> PreToolOutcome {
    h.pre_tool_use(tool, &input, "toolu_1", Path::new("/tmp"))
        .await
}

#[tokio::test]
async fn exit_codes_and_json_decisions() {
    let cases: Vec<(&str, Option<HookDecision>)> = vec![
        ("exit 0", None),
        ("echo 'not json'; exit 0", None),
        (
            "echo 'rm is not allowed here' >&2; exit 2",
            Some(HookDecision::Deny("rm is not allowed here".into())),
        ),
        ("echo oops >&2; exit 1", None),
        (
            r#"echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"nope"}}'"#,
            Some(HookDecision::Deny("nope".into())),
        ),
        (
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"ask","permissionDecisionReason":"check"}}'"#,
            Some(HookDecision::Ask("check".into())),
        ),
        (
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'"#,
            Some(HookDecision::Allow),
        ),
        (
            r#"echo '{"decision":"block","reason":"legacy"}'"#,
            Some(HookDecision::Deny("legacy".into())),
        ),
        (
            r#"echo '{"decision":"approve"}'"#,
            Some(HookDecision::Allow),
        ),
        (
            r#"echo '{"continue":false,"stopReason":"stop now"}'"#,
            Some(HookDecision::Deny("stop now".into())),
        ),
        // JSON on a non-zero, non-2 exit still decides.
        (
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"deny","permissionDecisionReason":"j"}}'; exit 1"#,
            Some(HookDecision::Deny("j".into())),
        ),
        // Exit 2 wins over a JSON allow.
        (
            r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'; echo blocked >&2; exit 2"#,
            Some(HookDecision::Deny("blocked".into())),
        ),
        // A missing program is a non-blocking error.
        ("/nonexistent/hook-script", None),
    ];
    for (cmd, want) in cases {
        let h = hooks("PreToolUse", Some("Bash"), cmd, json!({}));
        let out = pre(&h, "Bash", json!({"command": "ls"})).await;
        assert_eq!(out.decision, want, "{cmd}");
    }
}

#[tokio::test]
async fn stdin_carries_the_call_and_env_is_scrubbed() {
    assert!(std::env::var_os("HOME").is_some(), "test needs HOME set");
    let h = hooks(
        "PreToolUse",
        None,
        r#"input=$(cat); if [ -n "$HOME" ]; then echo leaked >&2; exit 2; fi; case "$input" in *'"tool_name":"Bash"'*'"hook_event_name":"PreToolUse"'*) ;; *'"hook_event_name":"PreToolUse"'*'"tool_name":"Bash"'*) ;; *) echo "bad stdin: $input" >&2; exit 2;; esac; echo "$input" | grep -q '"tool_use_id":"toolu_1"' || { echo no-id >&2; exit 2; }; echo '{"hookSpecificOutput":{"permissionDecision":"allow"}}'"#,
        json!({}),
    );
    let out = pre(&h, "Bash", json!({"command": "ls"})).await;
    assert_eq!(out.decision, Some(HookDecision::Allow), "{out:?}");
}

#[tokio::test]
async fn updated_input_and_context() {
    let h = hooks(
        "PreToolUse",
        None,
        r#"echo '{"hookSpecificOutput":{"permissionDecision":"allow","updatedInput":{"command":"ls -la"},"additionalContext":"note"}}'"#,
        json!({}),
    );
    let out = pre(&h, "Bash", json!({"command": "ls"})).await;
    assert_eq!(out.updated_input, Some(json!({"command": "ls -la"})));
    assert_eq!(out.context, vec!["note".to_string()]);
}

#[tokio::test]
async fn matchers_and_if_rules() {
    let block = "echo blocked >&2; exit 2";
    for (matcher, tool, runs) in [
        (Some("Bash"), "Bash", true),
        (Some("Edit|Write"), "Write", true),
        (Some("Edit, Write"), "Bash", false),
        (Some("mcp__gh__.*"), "mcp__gh__list", true),
        (Some("*"), "Read", true),
        (Some(""), "Read", true),
        (None, "Read", true),
    ] {
        let h = hooks("PreToolUse", matcher, block, json!({}));
        let out = pre(&h, tool, json!({"command": "ls"})).await;
        assert_eq!(out.decision.is_some(), runs, "{matcher:?} {tool}");
    }
    let h = hooks(
        "PreToolUse",
        Some("Bash"),
        block,
        json!({"if": "Bash(rm *)"}),
    );
    assert!(
        pre(&h, "Bash", json!({"command": "ls"}))
            .await
            .decision
            .is_none()
    );
    assert!(
        pre(&h, "Bash", json!({"command": "echo $(rm -rf x)"}))
            .await
            .decision
            .is_some()
    );
    assert!(
        pre(&h, "Bash", json!({"command": "rm -rf x"}))
            .await
            .decision
            .is_some()
    );
}

#[tokio::test]
async fn timeout_kills_and_gives_no_decision() {
    let h = hooks(
        "PreToolUse",
        None,
        "sleep 30; echo late >&2; exit 2",
        json!({"timeout": 0.3}),
    );
    let started = std::time::Instant::now();
    let out = pre(&h, "Bash", json!({"command": "ls"})).await;
    assert!(out.decision.is_none());
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn post_tool_use_feedback() {
    let h = hooks(
        "PostToolUse",
        None,
        "cat >/dev/null; echo 'lint failed' >&2; exit 2",
        json!({}),
    );
    let out = h
        .post_tool_use(
            "Edit",
            &json!({}),
            "t",
            &json!({"ok": true}),
            Path::new("/tmp"),
            Duration::ZERO,
        )
        .await;
    assert_eq!(
        out.feedback,
        vec!["PostToolUse hook feedback: lint failed".to_string()]
    );
    let h = hooks(
        "PostToolUse",
        None,
        r#"grep -q '"tool_response":{"ok":true}' && echo '{"decision":"block","reason":"fix formatting"}'"#,
        json!({}),
    );
    let out = h
        .post_tool_use(
            "Edit",
            &json!({}),
            "t",
            &json!({"ok": true}),
            Path::new("/tmp"),
            Duration::ZERO,
        )
        .await;
    assert_eq!(
        out.feedback,
        vec!["PostToolUse hook feedback: fix formatting".to_string()]
    );
}

#[test]
fn bad_configs_are_errors() {
    for cfg in [
        json!({"Notification": [{"hooks": [{"type": "command", "command": "x"}]}]}),
        json!({"PreToolUse": [{"hooks": [{"type": "http", "command": "x"}]}]}),
        json!({"PreToolUse": [{"matcher": "(", "hooks": [{"type": "command", "command": "x"}]}]}),
        json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "timeout": -1}]}]}),
        json!({"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "if": "Bash("}]}]}),
        json!({"PreToolUse": [{"hooks": [{"type": "command", "command": " "}]}]}),
    ] {
        let c: HooksConfig = serde_json::from_value(cfg.clone()).unwrap();
        assert!(Hooks::new(&c).is_err(), "{cfg}");
    }
}

#[tokio::test]
async fn stop_hook_stdin_and_outcomes() {
    // The stdin carries the base fields, stop_hook_active and last_assistant_message.
    let h = hooks(
        "Stop",
        None,
        r#"input=$(cat); for f in '"hook_event_name":"Stop"' '"stop_hook_active":true' '"last_assistant_message":"all done"' '"session_id":"s1"' '"permission_mode":"dontAsk"' '"transcript_path"' '"cwd"'; do case "$input" in *"$f"*) ;; *) echo "missing $f in $input"; exit 0;; esac; done; echo 'run the tests' >&2; exit 2"#,
        json!({}),
    );
    assert_eq!(
        h.stop(true, Some("all done")).await,
        StopOutcome::Block("run the tests".into())
    );
    let cases: Vec<(&str, StopOutcome)> = vec![
        ("exit 0", StopOutcome::Proceed),
        ("echo plain; exit 0", StopOutcome::Proceed),
        ("echo oops >&2; exit 1", StopOutcome::Proceed),
        (
            "exit 2",
            StopOutcome::Block("The Stop hook `exit 2` asks you to continue.".into()),
        ),
        (
            r#"echo '{"decision":"block","reason":"tests not run"}'"#,
            StopOutcome::Block("tests not run".into()),
        ),
        (
            r#"echo '{"decision":"block","reason":"j"}'; exit 1"#,
            StopOutcome::Block("j".into()),
        ),
        (
            r#"echo '{"continue":false,"stopReason":"quota"}'"#,
            StopOutcome::Halt("quota".into()),
        ),
        (
            r#"echo '{"continue":false,"stopReason":"quota","decision":"block","reason":"x"}'"#,
            StopOutcome::Halt("quota".into()),
        ),
        ("/nonexistent/stop-hook", StopOutcome::Proceed),
    ];
    for (cmd, want) in cases {
        let h = hooks("Stop", None, cmd, json!({}));
        assert_eq!(h.stop(false, Some("x")).await, want, "{cmd}");
    }
    // `continue: false` without a stopReason still halts.
    let h = hooks("Stop", None, r#"echo '{"continue":false}'"#, json!({}));
    assert!(matches!(h.stop(false, None).await, StopOutcome::Halt(_)));
}

#[tokio::test]
async fn post_tool_use_failure_gets_the_error() {
    let h = hooks(
        "PostToolUseFailure",
        Some("Bash"),
        r#"input=$(cat); case "$input" in *'"hook_event_name":"PostToolUseFailure"'*) ;; *) exit 0;; esac; case "$input" in *'"error":"exit 1: boom"'*) echo 'see the log' >&2; exit 2;; esac"#,
        json!({}),
    );
    let out = h
        .post_tool_use_failure(
            "Bash",
            &json!({"command": "false"}),
            "t",
            "exit 1: boom",
            Path::new("/tmp"),
            Duration::ZERO,
        )
        .await;
    assert_eq!(
        out.feedback,
        vec!["PostToolUseFailure hook feedback: see the log".to_string()]
    );
    // PostToolUse hooks do not run for failures, and vice versa.
    let out = h
        .post_tool_use(
            "Bash",
            &json!({}),
            "t",
            &json!("ok"),
            Path::new("/tmp"),
            Duration::ZERO,
        )
        .await;
    assert!(out.feedback.is_empty());
}

#[tokio::test]
async fn user_prompt_submit_outcomes() {
    let h = hooks(
        "UserPromptSubmit",
        None,
        r#"input=$(cat); case "$input" in *'"prompt":"fix it"'*'"source":"sdk"'*) echo 'branch is main';; *) echo "bad: $input" >&2; exit 2;; esac"#,
        json!({}),
    );
    let out = h.user_prompt_submit("fix it").await;
    assert_eq!(out.stop, None, "{out:?}");
    assert_eq!(out.context, vec!["branch is main".to_string()]);
    let cases: Vec<(&str, Option<&str>, Vec<&str>)> = vec![
        ("exit 0", None, vec![]),
        ("echo oops >&2; exit 1", None, vec![]),
        (
            "echo 'no secrets in prompts' >&2; exit 2",
            Some("the prompt was blocked by a UserPromptSubmit hook: no secrets in prompts"),
            vec![],
        ),
        (
            r#"echo '{"decision":"block","reason":"nope"}'"#,
            Some("the prompt was blocked by a UserPromptSubmit hook: nope"),
            vec![],
        ),
        (
            r#"echo '{"continue":false,"stopReason":"halt"}'"#,
            Some("halt"),
            vec![],
        ),
        (
            r#"echo '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ctx"}}'"#,
            None,
            vec!["ctx"],
        ),
    ];
    for (cmd, stop, context) in cases {
        let h = hooks("UserPromptSubmit", None, cmd, json!({}));
        let out = h.user_prompt_submit("p").await;
        assert_eq!(out.stop.as_deref(), stop, "{cmd}");
        assert_eq!(out.context, context, "{cmd}");
    }
}

#[tokio::test]
async fn session_start_and_end() {
    let h = hooks(
        "SessionStart",
        Some("startup"),
        r#"input=$(cat); case "$input" in *'"source":"startup"'*'"hook_event_name":"SessionStart"'*|*'"hook_event_name":"SessionStart"'*'"source":"startup"'*) echo '{"hookSpecificOutput":{"additionalContext":"node 20"}}';; *) echo "bad: $input";; esac"#,
        json!({}),
    );
    let out = h.session_start("m").await;
    assert_eq!(out.context, vec!["node 20".to_string()], "{out:?}");
    // Exit 2 does not block a session start; plain stdout is context.
    let h = hooks(
        "SessionStart",
        None,
        "echo ctx; echo e >&2; exit 2",
        json!({}),
    );
    assert_eq!(h.session_start("m").await, PromptOutcome::default());
    let h = hooks("SessionStart", None, "echo hello", json!({}));
    assert_eq!(
        h.session_start("m").await.context,
        vec!["hello".to_string()]
    );
    // A matcher for another source does not run.
    let h = hooks("SessionStart", Some("resume"), "echo hello", json!({}));
    assert!(h.session_start("m").await.context.is_empty());

    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("end.json");
    let h = hooks(
        "SessionEnd",
        None,
        &format!("cat > {}; exit 1", log.display()),
        json!({}),
    );
    h.session_end("other").await;
    let stdin: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(stdin["hook_event_name"], json!("SessionEnd"));
    assert_eq!(stdin["reason"], json!("other"));
}

#[tokio::test]
async fn continue_false_from_tool_hooks_halts_the_run() {
    let h = hooks(
        "PreToolUse",
        None,
        r#"echo '{"continue":false,"stopReason":"budget"}'"#,
        json!({}),
    );
    assert_eq!(h.halted(), None);
    let out = pre(&h, "Bash", json!({"command": "ls"})).await;
    assert_eq!(out.decision, Some(HookDecision::Deny("budget".into())));
    assert_eq!(h.halted().as_deref(), Some("budget"));
    // A fresh session starts unhalted.
    let fresh = h
        .clone()
        .with_session(HookSession::default(), ChildPolicy::default());
    assert_eq!(fresh.halted(), None);

    let h = hooks(
        "PostToolUse",
        None,
        r#"echo '{"continue":false}'"#,
        json!({}),
    );
    h.post_tool_use(
        "Edit",
        &json!({}),
        "t",
        &json!({}),
        Path::new("/tmp"),
        Duration::ZERO,
    )
    .await;
    assert!(
        h.halted()
            .is_some_and(|w| w.contains("said not to continue"))
    );
}

#[tokio::test]
async fn env_passthrough_gives_one_scrubbed_variable_back() {
    assert!(std::env::var_os("HOME").is_some(), "test needs HOME set");
    let cmd = r#"if [ -n "$HOME" ]; then echo "home seen" >&2; exit 2; fi"#;
    let h = hooks("PreToolUse", None, cmd, json!({}));
    assert_eq!(pre(&h, "Bash", json!({})).await.decision, None);
    let h = hooks(
        "PreToolUse",
        None,
        cmd,
        json!({"env_passthrough": ["HOME"]}),
    );
    assert_eq!(
        pre(&h, "Bash", json!({})).await.decision,
        Some(HookDecision::Deny("home seen".into()))
    );
}
