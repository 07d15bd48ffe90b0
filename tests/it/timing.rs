//! End-to-end: per-phase timing — a `runner_timing` record per turn whose phases add up to the
//! turn's wall time, the totals in the result and the JUnit properties, and the `--timings`
//! table on stderr.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::*;

const PHASES: [&str; 6] = [
    "request_build_ms",
    "retry_ms",
    "ttfb_ms",
    "stream_ms",
    "tools_ms",
    "hooks_ms",
];

fn ms(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

#[test]
fn each_turn_is_timed_by_phase_and_the_phases_make_up_the_turn() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("toolu_1", "Bash", json!({"command": "sleep 0.3"}))
            .turn()
            .delayed(Duration::from_millis(250)),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let junit = out.path().join("junit.xml");
    let spec = write_spec(
        repo.path(),
        "name: timed\nprompt: wait\nmodel: claude-sonnet-4-5\n\
         permissions:\n  allow: [\"Bash(sleep *)\"]\n\
         hooks:\n  PostToolUse:\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: sleep 0.2\n",
    );
    let run = exec(&mock, &repo, &out)
        .stream_json()
        .junit(&junit)
        .arg("--timings")
        .arg(&spec)
        .run();
    run.expect_code(0);

    // One record per turn in the stream and the transcript; the phases sum to the wall time.
    let frames = run.system("runner_timing");
    assert_eq!(frames.len(), 2, "{}", run.stdout);
    let all = run.json();
    let result = events_of(&all, "result", None)[0].clone();
    let records: Vec<Value> = transcript_of(&result)
        .into_iter()
        .filter(|r| r["subtype"] == "runner_timing")
        .collect();
    assert_eq!(records.len(), 2);
    for (frame, record) in frames.iter().zip(&records) {
        for key in PHASES.iter().chain(&["wall_ms", "turn"]) {
            assert_eq!(frame[key], record[key], "{key}: {frame} vs {record}");
        }
        let sum: u64 = PHASES.iter().map(|k| ms(frame, k)).sum();
        let wall = ms(frame, "wall_ms");
        assert!(
            sum.abs_diff(wall) <= 5,
            "phases {sum} ms, turn {wall} ms: {frame}"
        );
    }
    let first = &frames[0];
    assert_eq!(first["turn"], 1);
    assert!(ms(first, "ttfb_ms") >= 250, "{first}");
    assert!(ms(first, "tools_ms") >= 300, "{first}");
    assert!(ms(first, "hooks_ms") >= 200, "{first}");
    assert_eq!(frames[1]["turn"], 2);
    assert_eq!(ms(&frames[1], "tools_ms"), 0, "{}", frames[1]);

    // The totals: in the result and as JUnit properties.
    let totals = &result["runner_timing"];
    assert_eq!(totals["turns"], 2, "{result}");
    for key in PHASES.iter().chain(&["wall_ms"]) {
        assert_eq!(
            ms(totals, key),
            frames.iter().map(|f| ms(f, key)).sum::<u64>(),
            "{key}"
        );
    }
    let xml = std::fs::read_to_string(&junit).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let prop = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("property") && n.attribute("name") == Some(name))
            .and_then(|n| n.attribute("value"))
            .map(String::from)
    };
    assert_eq!(prop("timing.turns").as_deref(), Some("2"));
    assert_eq!(
        prop("timing.wall_ms"),
        Some(ms(totals, "wall_ms").to_string())
    );
    assert_eq!(
        prop("timing.hooks_ms"),
        Some(ms(totals, "hooks_ms").to_string())
    );
    assert_junit_valid(&junit);

    // --timings: the table on stderr, a row per phase and the turns' wall time.
    let table: Vec<&str> = run
        .stderr
        .lines()
        .skip_while(|l| !l.starts_with("runner timings:"))
        .collect();
    assert_eq!(
        table.first().copied(),
        Some("runner timings: 2 turn(s) in 1 task(s)"),
        "{}",
        run.stderr
    );
    for name in [
        "request_build",
        "retry",
        "ttfb",
        "stream",
        "tools",
        "hooks",
        "turns (wall)",
    ] {
        assert!(
            table.iter().any(|l| l.starts_with(name)),
            "{name} missing: {table:?}"
        );
    }
    let wall_row = table
        .iter()
        .find(|l| l.starts_with("turns (wall)"))
        .unwrap();
    assert!(
        wall_row.contains(&format!(" {} ", ms(totals, "wall_ms"))),
        "{wall_row}"
    );
    assert!(
        !run.stdout.contains("runner timings"),
        "the table is not output"
    );
    mock.assert_clean();
}

#[test]
fn without_timings_there_is_no_table() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("hi")]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: t\nprompt: hi\nmodel: claude-sonnet-4-5\n",
    );
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    assert!(!run.stderr.contains("runner timings"), "{}", run.stderr);
    assert_eq!(run.result()["runner_timing"]["turns"], 1);
}
