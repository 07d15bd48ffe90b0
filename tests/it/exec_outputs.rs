//! End-to-end: the shape of stream-json, the transcript (insta snapshots of one full run with
//! volatile fields normalized) and JUnit (schema-validated with xmllint) from real runs.

use std::collections::HashMap;
use std::path::Path;

use crate::support::*;
use serde_json::{Value, json};

fn is_uuid(s: &str) -> bool {
    s.len() == 36
        && s.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// Replace every uuid with `[uuid-N]` (N by first appearance, so links stay visible) and the
/// given paths with placeholders, everywhere in `v`.
struct Normalizer {
    ids: HashMap<String, usize>,
    paths: Vec<(String, &'static str)>,
}

impl Normalizer {
    fn new(paths: &[(&Path, &'static str)]) -> Self {
        let mut ps: Vec<(String, &'static str)> = paths
            .iter()
            .map(|(p, name)| {
                let p = std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
                (p.display().to_string(), *name)
            })
            .collect();
        ps.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        Normalizer {
            ids: HashMap::new(),
            paths: ps,
        }
    }

    fn value(&mut self, v: &mut Value) {
        match v {
            Value::String(s) => {
                if is_uuid(s) {
                    let n = self.ids.len() + 1;
                    let n = *self.ids.entry(s.clone()).or_insert(n);
                    *s = format!("[uuid-{n}]");
                    return;
                }
                for (p, name) in &self.paths {
                    if s.contains(p.as_str()) {
                        *s = s.replace(p.as_str(), name);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| self.value(x)),
            Value::Object(m) => m.values_mut().for_each(|x| self.value(x)),
            _ => {}
        }
    }

    fn all(&mut self, vs: &mut [Value]) {
        vs.iter_mut().for_each(|v| self.value(v));
    }
}

/// One full run: text + Read, a denied Bash, a final text.
fn full_run_script(file: &str) -> Vec<MockTurn> {
    vec![
        Resp::new()
            .id("msg_1")
            .text("Let me read it.")
            .tool_use("toolu_read", "Read", json!({"file_path": file}))
            .usage(100, 20)
            .turn(),
        Resp::new()
            .id("msg_2")
            .tool_use("toolu_rm", "Bash", json!({"command": "rm -rf target"}))
            .usage(150, 10)
            .cache(0, 100)
            .turn(),
        Resp::new()
            .id("msg_3")
            .text("Done: the file says hello.")
            .usage(200, 12)
            .cache(0, 150)
            .turn(),
    ]
}

#[test]
fn stream_json_and_transcript_of_one_full_run() {
    let repo = TestRepo::new();
    let file = std::fs::canonicalize(repo.write("hello.txt", "hello\n")).unwrap();
    let mock = MockAnthropic::start(full_run_script(file.to_str().unwrap()));
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: snap\nprompt: read hello.txt\nmodel: claude-sonnet-4-5\n",
    );
    let run = exec(&mock, &repo, &out).stream_json().arg(&spec).run();
    run.expect_code(0);
    let mut frames = run.json();

    // Structure, asserted directly (the snapshot below shows the detail).
    let types: Vec<String> = frames
        .iter()
        .map(|f| {
            let t = f["type"].as_str().unwrap();
            match f["subtype"].as_str() {
                Some(s) => format!("{t}/{s}"),
                None => t.to_string(),
            }
        })
        .collect();
    assert_eq!(
        types,
        [
            "system/init",
            "assistant",
            "assistant",
            "user",
            "system/runner_timing",
            "assistant",
            "system/permission_denied",
            "user",
            "system/runner_timing",
            "assistant",
            "system/runner_timing",
            "result/success"
        ]
    );
    let init = &frames[0];
    assert_eq!(init["model"], "claude-sonnet-4-5");
    assert_eq!(
        init["tools"],
        json!(["Read", "Write", "Edit", "Bash", "Glob", "Grep"])
    );
    assert_eq!(init["permissionMode"], "dontAsk");
    let sid = init["session_id"].as_str().unwrap().to_string();
    assert!(frames.iter().all(|f| f["session_id"] == sid.as_str()));
    for f in frames.iter().filter(|f| f["type"] == "assistant") {
        assert_eq!(f["message"]["content"].as_array().unwrap().len(), 1, "{f}");
    }
    let result = frames.last().unwrap();
    assert_result_frame(result);

    let mut transcript = transcript_of(result);
    assert_chain(&transcript);
    // Stream-json and transcript agree on the conversation uuids.
    let frame_uuids: Vec<&Value> = frames
        .iter()
        .filter(|f| f["type"] == "assistant" || f["type"] == "user")
        .map(|f| &f["uuid"])
        .collect();
    let record_uuids: Vec<&Value> = transcript
        .iter()
        .filter(|r| r["type"] == "assistant" || r["type"] == "user")
        .skip(1) // the prompt, which stream-json does not echo
        .map(|r| &r["uuid"])
        .collect();
    assert_eq!(frame_uuids, record_uuids);

    // How the commands were confined depends on the kernel: checked here, kept out of the
    // snapshots.
    let sandbox = &frames[0]["runner_sandbox"];
    assert_eq!(sandbox["mode"], "auto", "{sandbox}");
    assert_eq!(sandbox["network"], "none", "{sandbox}");
    assert_eq!(&frames.last().unwrap()["runner_sandbox"], sandbox);
    // Each turn's timing (its own tests check the numbers) is kept out of the snapshots.
    let timing = |r: &Value| r["subtype"] == "runner_timing";
    assert_eq!(transcript.iter().filter(|r| timing(r)).count(), 3);
    frames.retain(|f| !timing(f));
    transcript.retain(|r| !timing(r));
    let mut norm = Normalizer::new(&[(repo.path(), "[REPO]"), (out.path(), "[OUT]")]);
    norm.all(&mut frames);
    insta::assert_json_snapshot!("stream_json_full_run", frames, {
        "[].duration_ms" => "[ms]",
        "[].duration_api_ms" => "[ms]",
        "[].runner_transcript_path" => "[transcript]",
        "[].runner_version" => "[version]",
        "[].runner_git.base_commit" => "[commit]",
        "[].runner_sandbox" => "[sandbox]",
        "[].runner_timing" => "[timing]",
        "[].runner_commands[].duration_ms" => "[ms]",
    });

    snapshot_transcript(&mut norm, &mut transcript);
    mock.assert_clean();
}

/// The result frame of the full run: every key the SDK reads, and the run's figures.
fn assert_result_frame(result: &Value) {
    for key in [
        "subtype",
        "is_error",
        "num_turns",
        "duration_ms",
        "duration_api_ms",
        "total_cost_usd",
        "usage",
        "modelUsage",
        "permission_denials",
        "terminal_reason",
        "stop_reason",
        "uuid",
        "session_id",
        "result",
        "runner_outcome",
    ] {
        assert!(
            result.get(key).is_some(),
            "result frame lacks {key}: {result}"
        );
    }
    assert_eq!(result["num_turns"], 3);
    assert_eq!(
        result["usage"],
        json!({"input_tokens": 450, "cache_creation_input_tokens": 0,
               "cache_read_input_tokens": 250, "output_tokens": 42})
    );
    assert_eq!(result["permission_denials"][0]["tool_use_id"], "toolu_rm");
}

/// The full run's transcript, normalized, against its snapshot (today's date and the tool
/// schemas left out).
fn snapshot_transcript(norm: &mut Normalizer, transcript: &mut [Value]) {
    norm.all(transcript);
    // The prompt names today's date; tool schemas are tested with the tools (here: names).
    let first = &mut transcript[0];
    let date = find_date(&first["systemPrompt"]);
    let prompt = first["systemPrompt"]
        .as_str()
        .unwrap()
        .replace(&date, "[DATE]");
    first["systemPrompt"] = prompt.into();
    let names: Vec<Value> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    first["tools"] = names.into();
    insta::assert_json_snapshot!("transcript_full_run", transcript, {
        "[].timestamp" => "[timestamp]",
        "[].version" => "[version]",
        "[].gitBaseCommit" => "[commit]",
        "[].durationMs" => "[ms]",
        "[].result.duration_ms" => "[ms]",
        "[].result.duration_api_ms" => "[ms]",
        "[].result.runner_transcript_path" => "[transcript]",
        "[].result.runner_git.base_commit" => "[commit]",
        "[].sandbox" => "[sandbox]",
        "[].result.runner_sandbox" => "[sandbox]",
        "[].result.runner_timing" => "[timing]",
        "[].result.runner_commands[].duration_ms" => "[ms]",
    });
}

/// The `YYYY-MM-DD` date inside the system prompt (it names today's date).
fn find_date(prompt: &Value) -> String {
    let s = prompt.as_str().unwrap_or_default();
    let b = s.as_bytes();
    for i in 0..b.len().saturating_sub(10) {
        let w = &b[i..i + 10];
        if w.iter().enumerate().all(|(j, c)| match j {
            4 | 7 => *c == b'-',
            _ => c.is_ascii_digit(),
        }) {
            return String::from_utf8_lossy(w).into_owned();
        }
    }
    "[no date]".into()
}

#[test]
fn junit_from_a_real_run() {
    let repo = TestRepo::new();
    write_spec_named(
        repo.path(),
        "a.yaml",
        "# first task\nname: ok-task\nprompt: hi\nmodel: claude-sonnet-4-5\n",
    );
    write_spec_named(
        repo.path(),
        "b.yaml",
        "name: turns-task\nprompt: hi\nmodel: claude-sonnet-4-5\nlimits:\n  max_turns: 1\n",
    );
    write_spec_named(
        repo.path(),
        "c.yaml",
        "\n\nname: api-task\nprompt: hi\nmodel: claude-sonnet-4-5\n",
    );
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .text("fine <&> \u{1b}[31mred\u{1b}[0m")
            .usage(1000, 100)
            .turn(),
        tool_turn("toolu_1", "Glob", json!({"pattern": "*"})),
        http_error(401),
    ]);
    let out = OutDir::new();
    let junit = out.junit();
    let run = exec(&mock, &repo, &out)
        .junit(&junit)
        .json()
        .args(["a.yaml", "b.yaml", "c.yaml"])
        .run();
    run.expect_code(4);
    assert_junit_valid(&junit);
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("tests"), Some("3"));
    assert_eq!(root.attribute("failures"), Some("1"));
    assert_eq!(root.attribute("errors"), Some("1"));
    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    let results = run.json();
    let expect = [
        ("ok-task", "a.yaml", "2", None, "success"),
        ("turns-task", "b.yaml", "1", Some("failure"), "max_turns"),
        ("api-task", "c.yaml", "3", Some("error"), "api_error"),
    ];
    assert_eq!(suites.len(), 3);
    for ((suite, (name, file, line, element, outcome)), result) in
        suites.iter().zip(expect).zip(&results)
    {
        assert_eq!(suite.attribute("name"), Some(name));
        assert_eq!(suite.attribute("tests"), Some("1"));
        let ts = suite.attribute("timestamp").unwrap();
        assert_eq!(ts.len(), 19, "no zone: {ts}");
        assert!(suite.attribute("hostname").is_some_and(|h| !h.is_empty()));
        let props: HashMap<&str, &str> = suite
            .descendants()
            .filter(|n| n.has_tag_name("property"))
            .map(|n| (n.attribute("name").unwrap(), n.attribute("value").unwrap()))
            .collect();
        assert_eq!(props["model"], "claude-sonnet-4-5");
        assert_eq!(props["runner_outcome"], outcome);
        assert_eq!(props["session_id"], result["session_id"].as_str().unwrap());
        assert_eq!(
            props["transcript"],
            result["runner_transcript_path"].as_str().unwrap()
        );
        for k in [
            "turns",
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "cost_usd",
        ] {
            assert!(props.contains_key(k), "{name}: property {k}");
        }
        let case = suite
            .children()
            .find(|n| n.has_tag_name("testcase"))
            .unwrap();
        assert_eq!(case.attribute("classname"), Some(name));
        assert_eq!(case.attribute("file"), Some(file));
        assert_eq!(
            case.attribute("line"),
            Some(line),
            "{name}: line of `name:`"
        );
        let verdict = case
            .children()
            .find(|n| n.is_element() && !n.has_tag_name("system-out"))
            .map(|n| n.tag_name().name());
        assert_eq!(verdict, element, "{name}");
        if let Some(el) = element {
            let v = case.children().find(|n| n.has_tag_name(el)).unwrap();
            assert_eq!(v.attribute("type"), Some(outcome));
        }
    }
    let ok_props: HashMap<&str, &str> = suites[0]
        .descendants()
        .filter(|n| n.has_tag_name("property"))
        .map(|n| (n.attribute("name").unwrap(), n.attribute("value").unwrap()))
        .collect();
    assert_eq!(ok_props["turns"], "1");
    assert_eq!(ok_props["input_tokens"], "1000");
    assert_eq!(ok_props["output_tokens"], "100");
    assert_eq!(ok_props["cost_usd"], "0.004500");
    let out_text = suites[0]
        .descendants()
        .find(|n| n.has_tag_name("system-out"))
        .and_then(|n| n.text())
        .unwrap_or_default();
    assert!(
        out_text.contains("fine <&> red"),
        "ANSI stripped: {out_text:?}"
    );
    mock.assert_clean();
}
