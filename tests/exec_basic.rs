//! End-to-end: the real binary against the mock Anthropic server.

mod support;

use serde_json::json;
use support::*;

fn spec(prompt: &str, extra: &str) -> String {
    format!("name: t1\nprompt: {prompt:?}\nmodel: claude-sonnet-4-5\n{extra}")
}

#[test]
fn text_only_answer_succeeds() {
    let mock = MockAnthropic::start(vec![text_turn("All done.")]);
    let repo = TestRepo::new();
    let spec = write_spec(repo.path(), &spec("say hi", ""));
    let out = runner_cmd_for(&mock)
        .current_dir(repo.path())
        .args(["exec"])
        .arg(&spec)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "stderr: {stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "All done.\n");
    let req = mock.request(0);
    assert_eq!(req.body["model"], json!("claude-sonnet-4-5"));
    assert_eq!(req.body["stream"], json!(true));
    assert!(req.system_text().contains("No human is watching"));
    mock.assert_clean();
}
