//! Every frame and record real runs emit validates against the committed schemas
//! (`schema/*.schema.json`): stream-json frames, transcript records, the `json` result line,
//! `result.json` and the step outputs, over a single task with tools and a denial, a failing
//! task, a model error, a batch and a resumed run; and lines of unknown types or with unknown
//! fields do not.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::support::*;
use jsonschema::Validator;
use serde_json::{Value, json};

/// The committed schemas, one validator each.
struct Schemas {
    frame: Validator,
    record: Validator,
    result: Validator,
    result_file: Validator,
    outputs: Validator,
}

impl Schemas {
    fn load() -> Schemas {
        Schemas {
            frame: committed_schema("stream-json.schema.json"),
            record: committed_schema("transcript.schema.json"),
            result: committed_schema("result-message.schema.json"),
            result_file: committed_schema("result-file.schema.json"),
            outputs: committed_schema("step-outputs.schema.json"),
        }
    }
}

/// Panic naming each line of `lines` that `schema` rejects.
fn all_valid(schema: &Validator, what: &str, lines: &[Value]) {
    let bad: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let errs = schema_errors(schema, l);
            (!errs.is_empty()).then(|| format!("{l}\n  {}", errs.join("\n  ")))
        })
        .collect();
    assert!(bad.is_empty(), "{what}: invalid lines:\n{}", bad.join("\n"));
}

/// `type` or `type/subtype` of each line.
fn kinds(lines: &[Value]) -> BTreeSet<String> {
    lines
        .iter()
        .map(|l| match l["subtype"].as_str() {
            Some(s) if l["type"] != "result" => format!("{}/{s}", l["type"].as_str().unwrap()),
            _ => l["type"].as_str().unwrap().to_string(),
        })
        .collect()
}

/// Every transcript and `result.json` under `dir`, validated; the transcript records returned.
fn check_outputs(s: &Schemas, dir: &Path) -> Vec<Value> {
    let mut records = Vec::new();
    let mut results = 0;
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let t = e.path().join("transcript.jsonl");
        if t.is_file() {
            let lines = read_json_lines(&t);
            all_valid(&s.record, &t.display().to_string(), &lines);
            records.extend(lines);
        }
        let r = e.path().join("result.json");
        if r.is_file() {
            let v: Value = serde_json::from_str(&std::fs::read_to_string(&r).unwrap()).unwrap();
            all_valid(&s.result_file, &r.display().to_string(), &[v]);
            results += 1;
        }
    }
    assert!(
        !records.is_empty() && results > 0,
        "outputs under {}",
        dir.display()
    );
    records
}

/// `$GITHUB_OUTPUT`'s heredoc entries as one object.
fn outputs_object(text: &str) -> Value {
    let mut out = serde_json::Map::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some((name, delim)) = line.split_once("<<") else {
            continue;
        };
        let value: Vec<&str> = lines.by_ref().take_while(|l| *l != delim).collect();
        out.insert(name.to_string(), value.join("\n").into());
    }
    Value::Object(out)
}

#[test]
fn a_task_with_tools_a_denial_and_thinking_validates_everywhere() {
    let s = Schemas::load();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .thinking("let me look", "sig-1")
            .text("Running it.")
            .tool_use("toolu_1", "Bash", json!({"command": "echo hi"}))
            .tool_use("toolu_2", "Bash", json!({"command": "rm -rf build"}))
            .turn(),
        Resp::new()
            .tool_use(
                "toolu_3",
                "Write",
                json!({"file_path": "out.txt", "content": "x\n"}),
            )
            .turn(),
        text_turn("All done."),
    ]);
    let repo = TestRepo::new();
    repo.write("README", "x\n");
    repo.commit_all("base");
    let out = OutDir::new();
    let gh_out = out.path().join("github_output");
    let spec = write_spec(
        repo.path(),
        "name: tools\nprompt: go\npermissions:\n  allow: [\"Bash(echo:*)\", \"Write\"]\n  deny: [\"Bash(rm:*)\"]\nverify:\n  - run: \"true\"\n",
    );
    let run = exec(&mock, &repo, &out)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_OUTPUT", &gh_out)
        .stream_json()
        .arg(&spec)
        .run();
    run.expect_code(0);
    let frames = run.json();
    all_valid(&s.frame, "stream-json", &frames);
    let seen = kinds(&frames);
    for k in [
        "system/init",
        "system/permission_denied",
        "system/runner_checks",
        "system/runner_timing",
        "assistant",
        "user",
        "result",
    ] {
        assert!(seen.contains(k), "{k} among {seen:?}");
    }
    assert_eq!(
        frames[0]["schema_version"],
        runner::event_schema::SCHEMA_VERSION
    );
    all_valid(&s.result, "result frame", &[run.result_frame()]);

    let records = check_outputs(&s, &out.transcripts());
    let seen = kinds(&records);
    for k in [
        "system/runner_init",
        "system/runner_permission_denied",
        "system/runner_checks",
        "system/runner_result",
        "assistant",
        "user",
    ] {
        assert!(seen.contains(k), "{k} among {seen:?}");
    }
    assert_eq!(
        records[0]["schema_version"],
        runner::event_schema::SCHEMA_VERSION
    );

    let outputs = outputs_object(&std::fs::read_to_string(&gh_out).unwrap());
    assert_eq!(outputs["conclusion"], "success");
    all_valid(&s.outputs, "step outputs", &[outputs]);
}

#[test]
fn failures_and_model_errors_validate() {
    let s = Schemas::load();
    // A check that fails, then a request the API refuses.
    let mock = MockAnthropic::start(vec![text_turn("done"), http_error(400)]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let failing = write_spec_named(
        repo.path(),
        "a.yaml",
        &named_task(
            "a",
            "git:\n  isolate: false\nverify:\n  - run: \"false\"\nattempts: 1\n",
        ),
    );
    let refused = write_spec_named(
        repo.path(),
        "b.yaml",
        &named_task("b", "git:\n  isolate: false\n"),
    );
    let run = exec(&mock, &repo, &out)
        .json()
        .arg(&failing)
        .arg(&refused)
        .run();
    assert_ne!(run.code, Some(0), "{}", run.stderr);
    let lines = run.json();
    assert_eq!(lines.len(), 2, "{}", run.stdout);
    all_valid(&s.result, "json results", &lines);
    all_valid(&s.frame, "json results as frames", &lines);
    assert!(lines.iter().all(|l| l["is_error"] == true), "{lines:?}");
    check_outputs(&s, &out.transcripts());
}

#[test]
fn a_batch_in_stream_json_validates() {
    let s = Schemas::load();
    let mock = MockAnthropic::start_each(
        vec![
            tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
            text_turn("finished"),
        ],
        2,
    );
    let repo = TestRepo::new();
    repo.write("README", "x\n");
    repo.commit_all("base");
    let out = OutDir::new();
    let specs: Vec<PathBuf> = ["x", "y"]
        .iter()
        .map(|n| {
            write_spec_named(
                repo.path(),
                &format!("{n}.yaml"),
                &named_task(n, "permissions:\n  allow: [\"Bash(echo:*)\"]\n"),
            )
        })
        .collect();
    let run = exec(&mock, &repo, &out)
        .args(["--jobs", "2"])
        .stream_json()
        .args(&specs)
        .run();
    run.expect_code(0);
    let frames = run.json();
    all_valid(&s.frame, "batch stream-json", &frames);
    let sessions: BTreeSet<&str> = frames
        .iter()
        .filter_map(|f| f["session_id"].as_str())
        .collect();
    assert_eq!(sessions.len(), 2, "two sessions interleave");
    assert_eq!(frames.iter().filter(|f| f["type"] == "result").count(), 2);
    check_outputs(&s, &out.transcripts());
}

#[test]
fn a_resumed_run_validates() {
    let s = Schemas::load();
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("toolu_1", "Bash", json!({"command": "echo one"})),
        text_turn("finished"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: resumable\nprompt: do the work\npermissions:\n  allow: [\"Bash(echo:*)\"]\nlimits:\n  max_turns: 1\n",
    );
    let first = exec(&mock, &repo, &out).json().arg(&spec).run();
    first.expect_code(3);
    let path = first.result()["runner_transcript_path"]
        .as_str()
        .unwrap()
        .to_string();
    let run = exec(&mock, &repo, &out)
        .arg("--resume")
        .arg(&path)
        .args(["--max-turns", "2", "--prompt", "carry on"])
        .stream_json()
        .run();
    run.expect_code(0);
    let frames = run.json();
    all_valid(&s.frame, "resumed stream-json", &frames);
    assert_eq!(
        frames[0]["schema_version"],
        runner::event_schema::SCHEMA_VERSION
    );
    let records = check_outputs(&s, &out.transcripts());
    let seen = kinds(&records);
    assert!(seen.contains("system/runner_resume"), "{seen:?}");
    assert_eq!(
        records
            .iter()
            .filter(|r| r["subtype"] == "runner_result")
            .count(),
        2
    );
}

/// The schemas are closed: a line of a type or subtype runner does not write, or with a field
/// it does not write, is invalid.
#[test]
fn unknown_types_and_fields_are_invalid() {
    let s = Schemas::load();
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
    let run = exec(&mock, &repo, &out).stream_json().arg(&spec).run();
    run.expect_code(0);
    let frames = run.json();
    let records = check_outputs(&s, &out.transcripts());
    let find = |lines: &[Value], ty: &str, sub: Option<&str>| -> Value {
        lines
            .iter()
            .find(|l| l["type"] == ty && sub.is_none_or(|s| l["subtype"] == s))
            .unwrap_or_else(|| panic!("no {ty} {sub:?}"))
            .clone()
    };
    let cases: Vec<(&Validator, Value, &str)> = {
        let init = find(&frames, "system", Some("init"));
        let assistant = find(&frames, "assistant", None);
        let result = find(&frames, "result", None);
        let rinit = find(&records, "system", Some("runner_init"));
        let rresult = find(&records, "system", Some("runner_result"));
        let mut v = Vec::new();
        for (schema, line) in [
            (&s.frame, &init),
            (&s.frame, &assistant),
            (&s.frame, &result),
            (&s.record, &rinit),
            (&s.record, &rresult),
        ] {
            assert!(schema_errors(schema, line).is_empty(), "{line}");
            let mut ty = line.clone();
            ty["type"] = "bogus".into();
            v.push((schema, ty, "unknown type"));
            let mut extra = line.clone();
            extra["surprise"] = true.into();
            v.push((schema, extra, "unknown field"));
        }
        let mut sub = init.clone();
        sub["subtype"] = "bogus".into();
        v.push((&s.frame, sub, "unknown system subtype"));
        let mut sub = rinit.clone();
        sub["subtype"] = "runner_bogus".into();
        v.push((&s.record, sub, "unknown record subtype"));
        let mut nested = assistant.clone();
        nested["message"]["usage"]["surprise"] = 1.into();
        v.push((&s.frame, nested, "unknown usage field"));
        let mut nested = result.clone();
        nested["usage"]["surprise"] = 1.into();
        v.push((&s.result, nested, "unknown result usage field"));
        let mut missing = rinit.clone();
        missing.as_object_mut().unwrap().remove("schema_version");
        v.push((&s.record, missing, "runner_init without schema_version"));
        v
    };
    for (schema, line, what) in cases {
        assert!(
            !schema_errors(schema, &line).is_empty(),
            "{what} is valid: {line}"
        );
    }
    let rf = out
        .transcripts()
        .read_dir()
        .unwrap()
        .flatten()
        .map(|e| e.path().join("result.json"))
        .find(|p| p.is_file())
        .unwrap();
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(rf).unwrap()).unwrap();
    assert!(schema_errors(&s.result_file, &v).is_empty());
    v["surprise"] = 1.into();
    assert!(!schema_errors(&s.result_file, &v).is_empty());
    let outputs = json!({"conclusion": "maybe", "junit": "", "transcripts": "t", "cost_usd": "1"});
    assert_eq!(
        schema_errors(&s.outputs, &outputs).len(),
        2,
        "bad conclusion and cost"
    );
}
