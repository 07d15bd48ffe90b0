//! End-to-end: structured output (`output:` in the spec) through the real binary against the
//! mock servers — the StructuredOutput tool, validation errors fed back, retries, the value in
//! the json/stream-json result, `--output-file` and `$GITHUB_OUTPUT`; spec errors at load.

use crate::support::*;
use serde_json::{Value, json};

const SCHEMA: &str = "output:
  schema:
    type: object
    properties:
      verdict: {enum: [pass, fail]}
      score: {type: integer, minimum: 0}
    required: [verdict, score]
    additionalProperties: false
";

fn spec(repo: &TestRepo, extra: &str) -> std::path::PathBuf {
    write_spec(
        repo.path(),
        &format!("name: judge\nprompt: judge the code\ntools: [Read]\n{SCHEMA}{extra}"),
    )
}

fn so_turn(id: &str, input: Value) -> MockTurn {
    Resp::new()
        .tool_use(id, "StructuredOutput", input)
        .usage(100, 10)
        .turn()
}

#[test]
fn valid_first_time_ends_the_run_with_the_value() {
    let mock = MockAnthropic::start(vec![so_turn(
        "toolu_so",
        json!({"verdict": "pass", "score": 7}),
    )]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let file = out.path().join("answer.json");
    let s = spec(&repo, "");
    let run = exec(&mock, &repo, &out)
        .json()
        .arg("--output-file")
        .arg(&file)
        .arg(&s)
        .run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(r["subtype"], "success", "{r}");
    assert_eq!(
        r["structured_output"],
        json!({"verdict": "pass", "score": 7})
    );
    assert_eq!(r["num_turns"], 1);

    // The tool is offered with the spec's schema, and the system prompt says to finish with it.
    let req = mock.request(0);
    assert!(req.tool_names().contains(&"StructuredOutput".to_string()));
    let tool = req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "StructuredOutput")
        .unwrap();
    assert_eq!(
        tool["input_schema"]["required"],
        json!(["verdict", "score"])
    );
    assert!(req.system_text().contains("StructuredOutput"));
    // One request only: the valid call ended the run.
    assert_eq!(mock.served(), 1);

    // The transcript answers the tool_use (a successful tool_result), so it stays resumable.
    let records = transcript_of(&r);
    assert_chain(&records);
    let results: Vec<&Value> = records_of(&records, "user")
        .into_iter()
        .filter(|u| u["message"]["content"][0]["type"] == "tool_result")
        .collect();
    assert_eq!(results.len(), 1);
    let block = &results[0]["message"]["content"][0];
    assert_eq!(block["tool_use_id"], "toolu_so");
    assert_ne!(block["is_error"], true, "{block}");

    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&text).unwrap(),
        json!({"verdict": "pass", "score": 7})
    );
    mock.assert_clean();
}

#[test]
fn invalid_then_valid_feeds_every_error_back() {
    let mock = MockAnthropic::start(vec![
        so_turn(
            "toolu_1",
            json!({"verdict": "maybe", "score": -1, "extra": 1}),
        ),
        so_turn("toolu_2", json!({"verdict": "fail", "score": 0})),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let s = spec(&repo, "");
    let run = exec(&mock, &repo, &out).json().arg(&s).run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(
        r["structured_output"],
        json!({"verdict": "fail", "score": 0})
    );

    let second = mock.request(1);
    let res = second
        .tool_result("toolu_1")
        .expect("the invalid call is answered");
    assert_eq!(res["is_error"], true, "{res}");
    let text = second.tool_result_text("toolu_1").unwrap();
    assert!(text.contains("3 errors"), "{text}");
    assert!(text.contains("/verdict: "), "{text}");
    assert!(text.contains("/score: "), "{text}");
    assert!(text.contains("(root): "), "{text}");
    mock.assert_clean();
}

#[test]
fn retries_exhausted_fail_with_their_own_subtype() {
    let mock = MockAnthropic::start(vec![
        so_turn("toolu_1", json!({"verdict": "pass"})),
        so_turn("toolu_2", json!({"verdict": "pass"})),
        so_turn("toolu_3", json!({"verdict": "pass"})),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let s = spec(&repo, "  max_retries: 2\n");
    let run = exec(&mock, &repo, &out)
        .json()
        .junit(out.junit())
        .arg(&s)
        .run();
    run.expect_code(1);
    let r = run.result();
    assert_eq!(r["subtype"], "error_max_structured_output_retries", "{r}");
    assert_eq!(r["runner_outcome"], "agent_error");
    assert_eq!(r["is_error"], true);
    assert!(r.get("structured_output").is_none(), "{r}");
    assert_eq!(mock.served(), 3, "first call plus max_retries 2");
    // The last invalid call is still answered in the transcript.
    let records = transcript_of(&r);
    assert_chain(&records);
    let last_user = records_of(&records, "user").into_iter().last().unwrap();
    assert_eq!(last_user["message"]["content"][0]["tool_use_id"], "toolu_3");
    mock.assert_clean();
}

#[test]
fn ending_the_turn_without_the_tool_gets_a_reminder() {
    let mock = MockAnthropic::start(vec![
        text_turn("The code looks fine."),
        so_turn("toolu_1", json!({"verdict": "pass", "score": 9})),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let s = spec(&repo, "");
    let run = exec(&mock, &repo, &out).stream_json().arg(&s).run();
    run.expect_code(0);
    let frames = run.json();
    let result = frames.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(
        result["structured_output"],
        json!({"verdict": "pass", "score": 9})
    );
    let reminder = mock.request(1).message_text(2);
    assert!(reminder.contains("StructuredOutput"), "{reminder}");
    mock.assert_clean();
}

#[test]
fn only_text_turns_exhaust_the_retries() {
    let mock = MockAnthropic::start(vec![text_turn("no"), text_turn("still no")]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let s = spec(&repo, "  max_retries: 1\n");
    let run = exec(&mock, &repo, &out).json().arg(&s).run();
    run.expect_code(1);
    assert_eq!(
        run.result()["subtype"],
        "error_max_structured_output_retries"
    );
    mock.assert_clean();
}

#[test]
fn several_tasks_write_an_object_keyed_by_name_and_github_output() {
    let mock = MockAnthropic::start(vec![
        so_turn("toolu_a", json!({"verdict": "pass", "score": 1})),
        so_turn("toolu_b", json!({"verdict": "fail", "score": 2})),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let a = write_spec_named(
        repo.path(),
        "a.yaml",
        &format!("name: a\nprompt: judge a\ntools: []\n{SCHEMA}"),
    );
    let b = write_spec_named(
        repo.path(),
        "b.yaml",
        &format!("name: b\nprompt: judge b\ntools: []\n{SCHEMA}"),
    );
    let file = out.path().join("answers.json");
    let gh_out = out.path().join("github_output");
    let run = exec(&mock, &repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", gh_out.to_str().unwrap())
        .json()
        .arg("--output-file")
        .arg(&file)
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(0);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v,
        json!({"a": {"verdict": "pass", "score": 1}, "b": {"verdict": "fail", "score": 2}})
    );
    let gh = std::fs::read_to_string(&gh_out).unwrap();
    let mut lines = gh.lines();
    let delim = loop {
        let l = lines.next().expect("a structured_output entry");
        if let Some(d) = l.strip_prefix("structured_output<<") {
            break d.to_string();
        }
    };
    assert!(delim.starts_with("runner-"), "random delimiter: {delim}");
    let value: Value = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(value, v);
    assert_eq!(lines.next(), Some(delim.as_str()));
    mock.assert_clean();
}

#[test]
fn works_with_the_openai_provider() {
    let mock = MockOpenai::start(vec![
        OaResp::new()
            .tool_call("call_1", "StructuredOutput", json!({"verdict": "ok"}))
            .finish("tool_calls")
            .turn(),
        OaResp::new()
            .tool_call(
                "call_2",
                "StructuredOutput",
                json!({"verdict": "pass", "score": 3}),
            )
            .finish("tool_calls")
            .turn(),
    ]);
    let repo = TestRepo::new();
    let s = write_spec(
        repo.path(),
        &format!(
            "name: oa\nprompt: judge\nprovider: openai\nmodel: gpt-4o-mini\ntools: []\n{SCHEMA}"
        ),
    );
    let o = exec_in(&mock, &repo).json().arg(&s).run();
    o.expect_code(0);
    let r = o.json().pop().unwrap();
    assert_eq!(
        r["structured_output"],
        json!({"verdict": "pass", "score": 3}),
        "{r}"
    );
    let req = mock.request(0);
    assert!(
        req.oa_tool_names()
            .contains(&"StructuredOutput".to_string())
    );
    let second = mock.request(1);
    let tool_msg = second
        .oa_messages()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .expect("the invalid call is answered");
    assert!(
        tool_msg["content"].as_str().unwrap().contains("/verdict"),
        "{tool_msg}"
    );
    mock.assert_clean();
}

#[test]
fn works_with_replay() {
    // Record against the mock, then replay offline.
    let mock = MockAnthropic::start(vec![so_turn(
        "toolu_so",
        json!({"verdict": "pass", "score": 5}),
    )]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let s = spec(&repo, "");
    let cassette = out.path().join("so.cassette.jsonl");
    exec(&mock, &repo, &out)
        .json()
        .arg("--record")
        .arg(&cassette)
        .arg(&s)
        .run()
        .expect_code(0);
    let o = Runner::new()
        .current_dir(repo.path())
        .env_remove("ANTHROPIC_API_KEY")
        .args(["exec", "--output-format", "json", "--transcript-dir"])
        .arg(out.transcripts())
        .args(["--replay-mode", "strict", "--replay"])
        .arg(&cassette)
        .arg(&s)
        .run();
    o.expect_code(0);
    let r = o.json().pop().unwrap();
    assert_eq!(
        r["structured_output"],
        json!({"verdict": "pass", "score": 5})
    );
}

fn validate(repo: &TestRepo, yaml: &str) -> (Option<i32>, String) {
    let s = write_spec(repo.path(), yaml);
    let o = Runner::new()
        .current_dir(repo.path())
        .arg("validate")
        .arg(&s)
        .run();
    (o.code, o.stderr.clone())
}

#[test]
fn spec_errors_name_the_place() {
    let repo = TestRepo::new();
    // A keyword with a wrong value: the error points at it (line 7 is `type: strin`).
    let (code, err) = validate(
        &repo,
        "name: t\nprompt: p\noutput:\n  schema:\n    type: object\n    properties:\n      a: {type: strin}\n",
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("task.yaml:7:"), "{err}");
    assert!(err.contains("/properties/a/type"), "{err}");

    let (code, err) = validate(
        &repo,
        "name: t\nprompt: p\noutput:\n  schema: {type: string}\n",
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("type: object"), "{err}");

    let (code, err) = validate(&repo, "name: t\nprompt: p\noutput:\n  max_retries: 2\n");
    assert_eq!(code, Some(2));
    assert!(err.contains("task.yaml:3:"), "{err}");
    assert!(err.contains("schema_file"), "{err}");

    let (code, err) = validate(
        &repo,
        "name: t\nprompt: p\noutput:\n  schema: {type: object}\n  shema: 1\n",
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("shema"), "{err}");

    // A schema file: missing, malformed (its own line:col), and fine.
    let (code, err) = validate(
        &repo,
        "name: t\nprompt: p\noutput:\n  schema_file: nope.json\n",
    );
    assert_eq!(code, Some(2));
    assert!(
        err.contains("task.yaml:4:") && err.contains("nope.json"),
        "{err}"
    );
    repo.write(
        "bad.json",
        "{\n  \"type\": \"object\",\n  \"properties\": [\n",
    );
    let (code, err) = validate(
        &repo,
        "name: t\nprompt: p\noutput:\n  schema_file: bad.json\n",
    );
    assert_eq!(code, Some(2));
    assert!(err.contains("bad.json:4:"), "{err}");
    repo.write("ok.json", "{\"type\": \"object\", \"required\": [\"a\"]}");
    let (code, err) = validate(
        &repo,
        "name: t\nprompt: p\noutput:\n  schema_file: ok.json\n",
    );
    assert_eq!(code, Some(0), "{err}");
}

#[test]
fn text_output_prints_the_value() {
    let mock = MockAnthropic::start(vec![so_turn(
        "toolu_so",
        json!({"verdict": "fail", "score": 2}),
    )]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let s = spec(&repo, "");
    let run = exec(&mock, &repo, &out).arg(&s).run();
    run.expect_code(0);
    let v: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(v, json!({"verdict": "fail", "score": 2}));
    mock.assert_clean();
}

#[test]
fn a_failed_check_fed_back_asks_for_a_new_value() {
    let mock = MockAnthropic::start(vec![
        so_turn("toolu_1", json!({"verdict": "pass", "score": 1})),
        // After the check's feedback a text-only turn does not reuse the old value...
        text_turn("Fixed it."),
        // ...the model is reminded and gives a new one.
        so_turn("toolu_2", json!({"verdict": "pass", "score": 2})),
    ]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let s = spec(
        &repo,
        "attempts: 2\nverify:\n  - run: \"if [ -f .seen ]; then exit 0; else touch .seen; exit 1; fi\"\n",
    );
    let run = exec(&mock, &repo, &out).json().arg(&s).run();
    run.expect_code(0);
    let r = run.result();
    assert_eq!(
        r["structured_output"],
        json!({"verdict": "pass", "score": 2})
    );
    assert_eq!(mock.served(), 3);
    mock.assert_clean();
}

/// `output:` needs the StructuredOutput tool: a deny rule that removes it (in the spec or on the
/// command line) is an input error before anything runs.
#[test]
fn denying_the_structured_output_tool_is_an_input_error() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![]);
    let out = OutDir::new();
    let s = spec(&repo, "permissions:\n  deny: [StructuredOutput]\n");
    let run = exec(&mock, &repo, &out).json().arg(&s).run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("task.yaml:") && run.stderr.contains("removes StructuredOutput"),
        "{}",
        run.stderr
    );
    let s = spec(&repo, "");
    let run = exec(&mock, &repo, &out)
        .json()
        .args(["--disallowed-tools", "StructuredOutput"])
        .arg(&s)
        .run();
    run.expect_code(2);
    assert!(mock.requests().is_empty());
}
