//! End-to-end: read-only Bash calls in one message run as one concurrent batch and are
//! answered in the model's order (src/tools/executor.rs).

use crate::support::*;
use serde_json::json;

#[test]
fn three_read_only_bash_calls_in_one_message_are_answered_in_order() {
    let repo = TestRepo::new();
    repo.write("a.txt", "alpha\n");
    repo.write("b.txt", "one\nbeta\n");
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .text("looking")
            .tool_use("toolu_1", "Bash", json!({"command": "cat a.txt"}))
            .tool_use("toolu_2", "Bash", json!({"command": "grep -n beta b.txt"}))
            .tool_use("toolu_3", "Bash", json!({"command": "ls"}))
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: conc\nprompt: look\nmodel: claude-sonnet-4-5\n",
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let req = mock.request(1);
    let results = req.tool_results();
    let ids: Vec<&str> = results
        .iter()
        .map(|b| b["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["toolu_1", "toolu_2", "toolu_3"]);
    for b in &results {
        assert_ne!(b["is_error"], true, "{b}");
    }
    assert!(req.tool_result_text("toolu_1").unwrap().contains("alpha"));
    assert!(req.tool_result_text("toolu_2").unwrap().contains("2:beta"));
    let ls = req.tool_result_text("toolu_3").unwrap();
    assert!(ls.contains("a.txt") && ls.contains("b.txt"), "{ls}");
    assert_eq!(run.result()["runner_outcome"], "success");
    mock.assert_clean();
}
