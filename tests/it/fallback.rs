//! End-to-end: the fallback model — after the main model's retries for overload (HTTP 529)
//! are spent, the same attempt goes to `fallback_model` for the rest of the task, without the
//! main model's thinking; both models appear in `modelUsage` at their own prices.

use serde_json::json;

use crate::support::*;

const MAIN: &str = "claude-opus-4-1";
const FALLBACK: &str = "claude-sonnet-4-5";

#[test]
fn overload_after_the_retries_switches_to_the_fallback_model() {
    let repo = TestRepo::new();
    repo.write("a.txt", "alpha\n");
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .model(MAIN)
            .thinking("read a.txt first", "sig-main-1")
            .tool_use(
                "toolu_1",
                "Read",
                json!({"file_path": repo.path().join("a.txt")}),
            )
            .usage(1000, 100)
            .turn(),
        http_error(529),
        http_error(529),
        Resp::new()
            .model(FALLBACK)
            .thinking("done reading", "sig-fallback-1")
            .tool_use(
                "toolu_2",
                "Read",
                json!({"file_path": repo.path().join("a.txt")}),
            )
            .usage(2000, 200)
            .turn(),
        Resp::new()
            .model(FALLBACK)
            .text("done")
            .usage(3000, 300)
            .turn(),
    ]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &format!(
            "name: fb\nprompt: read a.txt\nmodel: {MAIN}\nfallback_model: {FALLBACK}\n\
             max_tokens: 8000\nthinking_budget_tokens: 2048\nretry:\n  max_retries: 1\n  base_delay: 10ms\n\
             limits:\n  max_cost_usd: 5\n"
        ),
    );
    let run = exec(&mock, &repo, &out).stream_json().arg(&spec).run();
    run.expect_code(0);

    let models: Vec<String> = mock
        .requests()
        .iter()
        .map(|r| r.body["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, [MAIN, MAIN, MAIN, FALLBACK, FALLBACK]);
    // The main model's signed thinking is not sent to the fallback; the fallback's own is.
    let to_fallback = &mock.request(3).raw_body;
    assert!(!to_fallback.contains("sig-main-1"), "{to_fallback}");
    assert!(mock.request(2).raw_body.contains("sig-main-1"));
    assert!(mock.request(4).raw_body.contains("sig-fallback-1"));
    assert!(!mock.request(4).raw_body.contains("sig-main-1"));

    let frames = run.json();
    let switch = run.system("runner_model_fallback");
    assert_eq!(switch.len(), 1);
    assert_eq!(switch[0]["from_model"], MAIN);
    assert_eq!(switch[0]["to_model"], FALLBACK);
    assert!(
        switch[0]["error"].as_str().unwrap().contains("529"),
        "{}",
        switch[0]
    );
    assert_eq!(
        run.system("api_retry").len(),
        1,
        "one retry on the main model"
    );

    let r = events_of(&frames, "result", None)[0];
    let usage = &r["modelUsage"];
    assert_eq!(usage[MAIN]["inputTokens"], 1000, "{usage}");
    assert_eq!(usage[FALLBACK]["inputTokens"], 5000, "{usage}");
    // Each model at its own prices (USD per million tokens: opus 15/75, sonnet 3/15).
    let main_cost = usage[MAIN]["costUSD"].as_f64().unwrap();
    let fallback_cost = usage[FALLBACK]["costUSD"].as_f64().unwrap();
    assert!(
        (main_cost - (1000.0 * 15.0 + 100.0 * 75.0) / 1e6).abs() < 1e-9,
        "{main_cost}"
    );
    assert!(
        (fallback_cost - (5000.0 * 3.0 + 500.0 * 15.0) / 1e6).abs() < 1e-9,
        "{fallback_cost}"
    );
    let total = r["total_cost_usd"].as_f64().unwrap();
    assert!((total - main_cost - fallback_cost).abs() < 1e-9);

    let t = transcript_of(r);
    let record = t
        .iter()
        .find(|x| x["subtype"] == "runner_model_fallback")
        .unwrap();
    assert_eq!(record["level"], "warning");
    assert_eq!(record["to_model"], FALLBACK);
    mock.assert_clean();
}

#[test]
fn without_a_fallback_overload_ends_the_task_as_before() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![http_error(529), http_error(529)]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &format!(
            "name: nofb\nprompt: hi\nmodel: {MAIN}\nretry:\n  max_retries: 1\n  base_delay: 10ms\n"
        ),
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(4);
    assert!(run.system("runner_model_fallback").is_empty());
    assert_eq!(mock.served(), 2);
    mock.assert_clean();
}

#[test]
fn a_fallback_model_needs_a_price_under_a_cost_limit() {
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        &format!(
            "name: fb\nprompt: hi\nmodel: {MAIN}\nfallback_model: my-local-model\nlimits:\n  max_cost_usd: 1\n"
        ),
    );
    let run = Runner::new().arg("validate").arg(&spec).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("task.yaml:4:")
            && run.stderr.contains("fallback model `my-local-model`"),
        "{}",
        run.stderr
    );
}
