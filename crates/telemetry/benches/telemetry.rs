//! What OpenTelemetry costs a run (a `harness = false` bench; `cargo bench -p runner-telemetry`):
//! off, the configuration check every run makes (no `OTEL_*` variable set); on, recording one
//! task of two turns (a model request with a retry, two tool calls, the task's end) into the
//! SDK's batch processor and instruments, with the exporters sending to a closed port on their
//! own threads. Each figure is the median per-call time over several samples.

// Benchmark code may unwrap, panic and print (the library may not: the workspace's [lints]).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

#[path = "../../../benches/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, SystemTime};

use common::{Table, fmt_dur, time_per_iter};
use runner_protocol::model::Usage;
use runner_telemetry::{
    Config, Decision, ModelRequest, Retry, Switch, TaskEnd, TaskStart, Telemetry, ToolCall, Turn,
};

const SAMPLES: usize = 7;
const TARGET: Duration = Duration::from_millis(300);

fn tool(id: &str, decision: Decision) -> ToolCall {
    let now = SystemTime::now();
    ToolCall {
        start: now,
        end: now,
        name: "Bash".into(),
        id: id.into(),
        decision,
        is_error: false,
        exit_code: Some(0),
        interrupted: false,
        timed_out: false,
        input: None,
        output: None,
    }
}

fn turn(number: u32) -> Turn {
    let now = SystemTime::now();
    Turn {
        number,
        start: now,
        end: now,
        request: Some(ModelRequest {
            start: now,
            end: now,
            request_model: "claude-sonnet-4-5".into(),
            response_model: Some("claude-sonnet-4-5-20250929".into()),
            response_id: Some("msg_01".into()),
            usage: Usage {
                input_tokens: 1200,
                output_tokens: 300,
                cache_creation_input_tokens: 50,
                cache_read_input_tokens: 900,
            },
            finish_reason: Some("tool_use".into()),
            retries: vec![Retry {
                at: now,
                attempt: 1,
                status: Some(529),
                error: "overloaded".into(),
                delay_ms: 500,
            }],
            input: None,
            output: None,
        }),
        tools: vec![
            tool("toolu_1", Decision::Allow),
            tool("toolu_2", Decision::Deny("deny rule Bash(rm:*)".into())),
        ],
        notes: vec![],
    }
}

fn main() {
    println!(
        "runner-telemetry: median of {SAMPLES} samples of ~{} ms each\n",
        TARGET.as_millis()
    );
    let mut t = Table::new(&["case", "per call"]);

    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(Config::from_env(Switch::Auto, false, |n| std::env::var(n).ok()).unwrap());
    });
    t.row(vec![
        "off: configuration check (no OTEL_* set)".into(),
        fmt_dur(d),
    ]);

    let config = Config::from_env(Switch::On, false, |n| match n {
        "OTEL_EXPORTER_OTLP_ENDPOINT" => Some("http://127.0.0.1:9".into()),
        "OTEL_EXPORTER_OTLP_TIMEOUT" => Some("200".into()),
        _ => None,
    })
    .unwrap()
    .unwrap();
    let start = std::time::Instant::now();
    let telemetry = Telemetry::start(&config, "bench", |n| std::env::var(n).ok()).unwrap();
    t.row(vec![
        "on: start (exporters, batch span)".into(),
        fmt_dur(start.elapsed()),
    ]);
    let (d, _) = time_per_iter(SAMPLES, TARGET, || {
        let mut task = telemetry.task(TaskStart {
            name: "t1".into(),
            session_id: "00000000-0000-4000-8000-000000000000".into(),
            provider: "anthropic".into(),
            model: "claude-sonnet-4-5".into(),
            permission_mode: "default".into(),
            sandbox: Some("auto".into()),
        });
        task.turn(turn(1));
        task.turn(turn(2));
        task.end(TaskEnd {
            outcome: "success".into(),
            turns: 2,
            model: "claude-sonnet-4-5".into(),
            cost_usd: Some(0.01),
            ..Default::default()
        });
    });
    t.row(vec![
        "on: one task of two turns recorded".into(),
        fmt_dur(d),
    ]);
    let start = std::time::Instant::now();
    telemetry.shutdown(&[(
        "t1".to_string(),
        TaskEnd {
            outcome: "success".into(),
            ..Default::default()
        },
    )]);
    t.row(vec![
        "on: final flush, collector refusing (bound 200 ms + 500 ms)".into(),
        fmt_dur(start.elapsed()),
    ]);
    println!("{}", t.render());
}
