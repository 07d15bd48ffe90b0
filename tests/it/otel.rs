//! End-to-end: OpenTelemetry export. The real binary against the mock model server, exporting
//! to an OTLP/HTTP receiver on 127.0.0.1 that decodes with `opentelemetry-proto`: the span tree,
//! its GenAI attributes and the metric values of a real run, TRACEPARENT parenting, an
//! unreachable or silent collector, and no connection at all when export is off.

use std::collections::HashMap;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use opentelemetry_proto::tonic::trace::v1::Span;
use serde_json::json;

use crate::support::otlp::{OtlpReceiver, attr};
use crate::support::*;

const FAST_RETRY: &str = "retry:\n  base_delay: 1ms\n  max_delay: 5ms\n";
const PERMS: &str = "permissions:\n  allow: [\"Bash(echo:*)\"]\n  deny: [\"Bash(rm:*)\"]\n";

fn hex(id: &[u8]) -> String {
    id.iter().map(|b| format!("{b:02x}")).collect()
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn one<'a>(spans: &'a [Span], name: &str) -> &'a Span {
    let found = named(spans, name);
    assert_eq!(found.len(), 1, "one `{name}` span in {:?}", names(spans));
    found[0]
}

fn names(spans: &[Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}

fn children<'a>(spans: &'a [Span], parent: &Span) -> Vec<&'a Span> {
    spans
        .iter()
        .filter(|s| s.parent_span_id == parent.span_id && s.trace_id == parent.trace_id)
        .collect()
}

/// A task that retries once, then runs an allowed and a denied command, then answers.
fn script() -> Vec<MockTurn> {
    script_echoing("hi")
}

fn script_echoing(what: &str) -> Vec<MockTurn> {
    vec![
        http_error(500),
        Resp::new()
            .tool_use(
                "toolu_ok",
                "Bash",
                json!({"command": format!("echo {what}")}),
            )
            .tool_use("toolu_no", "Bash", json!({"command": "rm -rf nothing"}))
            .usage(100, 20)
            .cache(7, 3)
            .turn(),
        Resp::new().text("Done.").usage(200, 10).turn(),
    ]
}

fn run_exporting(receiver: &OtlpReceiver, vars: &[(&str, &str)]) -> (MockAnthropic, Run) {
    run_script(receiver, vars, script())
}

fn run_script(
    receiver: &OtlpReceiver,
    vars: &[(&str, &str)],
    script: Vec<MockTurn>,
) -> (MockAnthropic, Run) {
    let mock = MockAnthropic::start(script);
    let repo = TestRepo::new();
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        &format!("name: t1\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\n{FAST_RETRY}{PERMS}"),
    );
    let run = exec(&mock, &repo, &out)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .envs(vars.iter().copied())
        .arg(&spec)
        .run();
    (mock, run)
}

#[test]
fn a_run_exports_its_span_tree_attributes_and_metrics() {
    let receiver = OtlpReceiver::start();
    let (mock, run) = run_exporting(
        &receiver,
        &[
            ("OTEL_SERVICE_NAME", "ci-agent"),
            ("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=test"),
            ("GITHUB_REPOSITORY", "o/r"),
            ("GITHUB_RUN_ID", "4242"),
            ("GITHUB_WORKFLOW", "nightly"),
            ("GITHUB_JOB", "agent"),
            ("JOB_COMPLETION_INDEX", "2"),
        ],
    );
    run.expect_code(0);
    mock.assert_clean();
    let spans = receiver.spans();

    let batch = one(&spans, "runner batch");
    assert!(
        batch.parent_span_id.is_empty(),
        "no TRACEPARENT: the batch is a root"
    );
    assert_eq!(
        attr(&batch.attributes, "runner.tasks").as_deref(),
        Some("1")
    );
    let task = one(&spans, "invoke_agent t1");
    assert_eq!(task.parent_span_id, batch.span_id);
    let a = &task.attributes;
    assert_eq!(
        attr(a, "gen_ai.operation.name").as_deref(),
        Some("invoke_agent")
    );
    assert_eq!(attr(a, "gen_ai.system").as_deref(), Some("anthropic"));
    assert_eq!(
        attr(a, "gen_ai.request.model").as_deref(),
        Some("claude-sonnet-4-5")
    );
    assert_eq!(attr(a, "runner.task.outcome").as_deref(), Some("success"));
    assert_eq!(attr(a, "runner.task.turns").as_deref(), Some("2"));
    assert_eq!(attr(a, "gen_ai.usage.output_tokens").as_deref(), Some("30"));

    let turns: Vec<&Span> = children(&spans, task);
    assert_eq!(
        names(&turns.iter().map(|s| (*s).clone()).collect::<Vec<_>>()),
        ["turn 1", "turn 2"]
    );
    let t1 = children(&spans, turns[0]);
    let chat = t1
        .iter()
        .find(|s| s.name == "chat claude-sonnet-4-5")
        .unwrap();
    let c = &chat.attributes;
    assert_eq!(
        attr(c, "gen_ai.response.model").as_deref(),
        Some("claude-mock")
    );
    assert_eq!(
        attr(c, "gen_ai.response.finish_reasons").as_deref(),
        Some("tool_use")
    );
    assert_eq!(attr(c, "gen_ai.usage.input_tokens").as_deref(), Some("110"));
    assert_eq!(attr(c, "gen_ai.usage.output_tokens").as_deref(), Some("20"));
    assert_eq!(attr(c, "runner.retries").as_deref(), Some("1"));
    assert_eq!(
        chat.events.len(),
        1,
        "the retry is an event: {:?}",
        chat.events
    );
    assert_eq!(chat.events[0].name, "retry");
    assert_eq!(
        attr(&chat.events[0].attributes, "http.response.status_code").as_deref(),
        Some("500")
    );
    assert!(chat.start_time_unix_nano >= turns[0].start_time_unix_nano);
    assert!(chat.end_time_unix_nano <= turns[0].end_time_unix_nano);

    let tools: HashMap<String, &Span> = t1
        .iter()
        .filter(|s| s.name == "execute_tool Bash")
        .map(|s| (attr(&s.attributes, "gen_ai.tool.call.id").unwrap(), *s))
        .collect();
    let ok = &tools["toolu_ok"].attributes;
    assert_eq!(
        attr(ok, "runner.permission.decision").as_deref(),
        Some("allow")
    );
    assert_eq!(attr(ok, "process.exit.code").as_deref(), Some("0"));
    let no = &tools["toolu_no"].attributes;
    assert_eq!(
        attr(no, "runner.permission.decision").as_deref(),
        Some("deny")
    );
    assert!(attr(no, "runner.permission.reason").is_some_and(|r| !r.is_empty()));
    // No content unless opted in.
    for s in &spans {
        for key in [
            "gen_ai.input.messages",
            "gen_ai.output.messages",
            "gen_ai.tool.call.arguments",
        ] {
            assert!(attr(&s.attributes, key).is_none(), "{key} on {}", s.name);
        }
    }
    let t2 = children(&spans, turns[1]);
    assert_eq!(
        names(&t2.iter().map(|s| (*s).clone()).collect::<Vec<_>>()),
        ["chat claude-sonnet-4-5"]
    );
    assert!(spans.iter().all(|s| s.trace_id == batch.trace_id));

    assert_resource_and_metrics(&receiver);
}

/// The resource and the metric values of [`script`]'s run.
fn assert_resource_and_metrics(receiver: &OtlpReceiver) {
    let res = receiver.resource();
    for (k, v) in [
        ("service.name", "ci-agent"),
        ("deployment.environment", "test"),
        ("github.repository", "o/r"),
        ("cicd.pipeline.run.id", "4242"),
        ("github.workflow", "nightly"),
        ("github.job", "agent"),
        ("k8s.job.completion_index", "2"),
    ] {
        assert_eq!(attr(&res, k).as_deref(), Some(v), "resource {k}");
    }

    let m = |name: &str, attrs: &[(&str, &str)]| receiver.metric(name, attrs);
    assert_eq!(
        m("runner.tokens", &[("runner.token.kind", "input")]),
        Some(300.0)
    );
    assert_eq!(
        m("runner.tokens", &[("runner.token.kind", "output")]),
        Some(30.0)
    );
    assert_eq!(
        m("runner.tokens", &[("runner.token.kind", "cache_creation")]),
        Some(7.0)
    );
    assert_eq!(
        m("runner.tokens", &[("runner.token.kind", "cache_read")]),
        Some(3.0)
    );
    assert_eq!(m("runner.model.requests", &[]), Some(2.0));
    assert_eq!(m("runner.model.retries", &[]), Some(1.0));
    assert_eq!(
        m("runner.tool.denials", &[("gen_ai.tool.name", "Bash")]),
        Some(1.0)
    );
    assert_eq!(
        m("runner.tool.duration", &[("runner.tool.outcome", "ok")]),
        Some(1.0)
    );
    assert_eq!(
        m("runner.tasks", &[("runner.task.outcome", "success")]),
        Some(1.0)
    );
    assert_eq!(
        m(
            "gen_ai.client.token.usage",
            &[("gen_ai.token.type", "output")]
        ),
        Some(2.0)
    );
    let cost = m("runner.cost", &[]).unwrap();
    assert!(cost > 0.0, "a priced model's cost: {cost}");
}

#[test]
fn content_is_exported_only_when_opted_in_and_then_redacted() {
    let receiver = OtlpReceiver::start();
    // The command names the API key: what is exported of it is redacted.
    let (_mock, run) = run_script(
        &receiver,
        &[
            ("RUNNER_OTEL_CONTENT", "1"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ],
        script_echoing(DUMMY_API_KEY),
    );
    run.expect_code(0);
    let spans = receiver.spans();
    let chats = named(&spans, "chat claude-sonnet-4-5");
    let input = attr(&chats[0].attributes, "gen_ai.input.messages").unwrap();
    assert!(input.contains("do it"), "{input}");
    let last = attr(&chats[1].attributes, "gen_ai.output.messages").unwrap();
    assert_eq!(last, "Done.");
    let ok = named(&spans, "execute_tool Bash")
        .into_iter()
        .find(|s| attr(&s.attributes, "gen_ai.tool.call.id").as_deref() == Some("toolu_ok"))
        .unwrap();
    let args = attr(&ok.attributes, "gen_ai.tool.call.arguments").unwrap();
    assert!(
        args.contains("echo ") && args.contains("[REDACTED"),
        "{args}"
    );
    let result = attr(&ok.attributes, "gen_ai.tool.call.result").unwrap();
    assert!(!result.is_empty());
    let everything = format!("{spans:?}");
    assert!(
        !everything.contains(DUMMY_API_KEY),
        "the key is exported: {everything}"
    );
    assert_eq!(receiver.metric("runner.tasks", &[]), None, "metrics off");
}

#[test]
fn traceparent_from_the_environment_is_the_parent() {
    let receiver = OtlpReceiver::start();
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let (_mock, run) = run_exporting(
        &receiver,
        &[("TRACEPARENT", &format!("00-{trace}-{parent}-01"))],
    );
    run.expect_code(0);
    let spans = receiver.spans();
    let batch = one(&spans, "runner batch");
    assert_eq!(hex(&batch.trace_id), trace);
    assert_eq!(hex(&batch.parent_span_id), parent);
    assert!(spans.iter().all(|s| hex(&s.trace_id) == trace));
}

#[test]
fn a_batch_is_one_trace_with_a_span_per_task() {
    let receiver = OtlpReceiver::start();
    let repo = TestRepo::new();
    let a = write_spec_named(repo.path(), "a.yaml", &named_task("alpha", ""));
    let b = write_spec_named(repo.path(), "b.yaml", &named_task("beta", ""));
    let mock = MockAnthropic::start_each(vec![text_turn("done")], 2);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .args(["--jobs", "2"])
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(0);
    let spans = receiver.spans();
    let batch = one(&spans, "runner batch");
    assert_eq!(
        attr(&batch.attributes, "runner.tasks").as_deref(),
        Some("2")
    );
    for name in ["invoke_agent alpha", "invoke_agent beta"] {
        let task = one(&spans, name);
        assert_eq!(task.parent_span_id, batch.span_id, "{name}");
        assert_eq!(children(&spans, task).len(), 1, "{name}: one turn");
    }
    assert_eq!(
        receiver.metric("runner.tasks", &[("runner.task.outcome", "success")]),
        Some(2.0)
    );
    assert_eq!(receiver.metric("runner.model.requests", &[]), Some(2.0));
}

#[test]
fn an_unreachable_collector_neither_fails_nor_holds_up_the_run_and_is_logged_once() {
    // A port nothing listens on: every export is refused.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: t1\nprompt: \"x\"\nmodel: claude-sonnet-4-5\n",
    );
    let run = exec_in(&mock, &repo)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .arg(&spec)
        .run();
    run.expect_code(0);
    assert_eq!(run.stdout, "done\n");
    assert_eq!(
        run.stderr.matches("OpenTelemetry export to").count(),
        1,
        "logged once: {}",
        run.stderr
    );
}

#[test]
fn a_silent_collector_holds_the_exit_up_no_longer_than_the_export_timeout() {
    // Accepts connections and never answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let endpoint = format!("http://{}", silent.local_addr().unwrap());
    let held = std::thread::spawn(move || {
        let mut open = Vec::new();
        for s in silent.incoming().take(8) {
            open.push(s);
        }
        open.len()
    });
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: t1\nprompt: \"x\"\nmodel: claude-sonnet-4-5\n",
    );
    let started = Instant::now();
    let run = exec_in(&mock, &repo)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)
        .env("OTEL_EXPORTER_OTLP_TIMEOUT", "300")
        .arg(&spec)
        .run();
    let took = started.elapsed();
    run.expect_code(0);
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(run.stderr.contains("OpenTelemetry"), "{}", run.stderr);
    drop(held);
}

#[test]
fn no_connection_is_made_when_export_is_off() {
    let receiver = OtlpReceiver::start();
    for vars in [
        vec![("OTEL_SDK_DISABLED", "true")],
        vec![("RUNNER_OTEL", "off")],
        vec![
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ],
    ] {
        let (_mock, run) = run_exporting(&receiver, &vars);
        run.expect_code(0);
        assert_eq!(receiver.connections(), 0, "{vars:?}");
    }
    // And without an endpoint variable: nothing is built, the receiver (the only collector)
    // hears nothing, and the run is the same.
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let repo = TestRepo::new();
    let spec = write_spec(
        repo.path(),
        "name: t1\nprompt: \"x\"\nmodel: claude-sonnet-4-5\n",
    );
    let run = exec_in(&mock, &repo).arg(&spec).run();
    run.expect_code(0);
    assert!(!run.stderr.contains("OpenTelemetry"), "{}", run.stderr);
    assert_eq!(receiver.connections(), 0);
}

#[test]
fn sigterm_still_flushes_the_interrupted_task() {
    let receiver = OtlpReceiver::start();
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![MockTurn::Stall {
        events: Resp::new().text("slow answer").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: sig\nprompt: hi\n");
    let started = exec(&mock, &repo, &out)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .arg(&spec)
        .spawn();
    assert!(mock.wait_for_requests(1, Duration::from_secs(30)));
    std::thread::sleep(Duration::from_millis(200));
    started.signal(nix::sys::signal::Signal::SIGTERM);
    started.wait().expect_code(143);
    let spans = receiver.spans();
    one(&spans, "runner batch");
    let task = one(&spans, "invoke_agent sig");
    assert_eq!(
        attr(&task.attributes, "runner.task.outcome").as_deref(),
        Some("interrupted")
    );
    assert_eq!(
        receiver.metric("runner.tasks", &[("runner.task.outcome", "interrupted")]),
        Some(1.0)
    );
}

#[test]
fn a_spec_keeps_its_task_out_of_the_export_or_opts_its_content_in() {
    let receiver = OtlpReceiver::start();
    let repo = TestRepo::new();
    let a = write_spec_named(
        repo.path(),
        "a.yaml",
        &named_task("alpha", "telemetry:\n  export: false\n"),
    );
    let b = write_spec_named(
        repo.path(),
        "b.yaml",
        &named_task("beta", "telemetry:\n  content: true\n"),
    );
    let mock = MockAnthropic::start_each(vec![text_turn("done")], 2);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .arg(&a)
        .arg(&b)
        .run();
    run.expect_code(0);
    let spans = receiver.spans();
    assert!(
        named(&spans, "invoke_agent alpha").is_empty(),
        "{:?}",
        names(&spans)
    );
    let batch = one(&spans, "runner batch");
    assert_eq!(
        attr(&batch.attributes, "runner.tasks").as_deref(),
        Some("1")
    );
    one(&spans, "invoke_agent beta");
    let chat = one(&spans, "chat claude-sonnet-4-5");
    let input = attr(&chat.attributes, "gen_ai.input.messages").unwrap_or_default();
    assert!(input.contains("task beta"), "{input}");
    assert_eq!(
        attr(&chat.attributes, "gen_ai.output.messages").as_deref(),
        Some("done")
    );
    assert_eq!(receiver.metric("runner.tasks", &[]), Some(1.0));
    assert_eq!(receiver.metric("runner.model.requests", &[]), Some(1.0));

    // Every task opted out: nothing is built, nothing connects.
    let quiet = OtlpReceiver::start();
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let run = exec(&mock, &repo, &OutDir::new())
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", quiet.endpoint())
        .arg(&a)
        .run();
    run.expect_code(0);
    assert_eq!(quiet.connections(), 0);
}

#[test]
fn tasks_that_never_ran_have_their_span_and_are_counted() {
    let receiver = OtlpReceiver::start();
    let repo = TestRepo::new();
    let dir = repo.path().join("tasks");
    std::fs::create_dir(&dir).unwrap();
    write_spec_named(
        &dir,
        "a.yaml",
        &named_task(
            "a-fails",
            "git:\n  isolate: false\nverify:\n  - run: \"false\"\n",
        ),
    );
    write_spec_named(
        &dir,
        "b.yaml",
        &named_task("b-later", "git:\n  isolate: false\n"),
    );
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let run = exec(&mock, &repo, &out)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .arg("--fail-fast")
        .arg(&dir)
        .run();
    run.expect_code(1);
    let spans = receiver.spans();
    let batch = one(&spans, "runner batch");
    let failed = one(&spans, "invoke_agent a-fails");
    assert_eq!(
        attr(&failed.attributes, "runner.task.outcome").as_deref(),
        Some("checks_failed")
    );
    let later = one(&spans, "invoke_agent b-later");
    assert_eq!(later.parent_span_id, batch.span_id);
    assert_eq!(
        attr(&later.attributes, "runner.task.outcome").as_deref(),
        Some("skipped")
    );
    assert!(children(&spans, later).is_empty());
    for outcome in ["checks_failed", "skipped"] {
        assert_eq!(
            receiver.metric("runner.tasks", &[("runner.task.outcome", outcome)]),
            Some(1.0),
            "{outcome}"
        );
    }
}

#[test]
fn headers_and_gzip_compression_come_from_the_variables() {
    let receiver = OtlpReceiver::start();
    let (_mock, run) = run_exporting(
        &receiver,
        &[
            (
                "OTEL_EXPORTER_OTLP_HEADERS",
                "x-team=agents,authorization=Bearer%20tok",
            ),
            ("OTEL_EXPORTER_OTLP_COMPRESSION", "gzip"),
        ],
    );
    run.expect_code(0);
    // Decoded after gunzipping: the whole tree is there.
    let spans = receiver.spans();
    one(&spans, "invoke_agent t1");
    assert_eq!(receiver.metric("runner.tasks", &[]), Some(1.0));
    let requests = receiver.headers();
    assert!(requests.len() >= 2, "a trace and a metric export");
    for headers in &requests {
        let get = |name: &str| {
            headers
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(get("x-team"), Some("agents"), "{headers:?}");
        assert_eq!(get("authorization"), Some("Bearer tok"), "{headers:?}");
        assert_eq!(get("content-encoding"), Some("gzip"), "{headers:?}");
    }
}
