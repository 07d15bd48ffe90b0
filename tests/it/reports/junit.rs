//! JUnit XML: schema validity (xmllint against junit-10.xsd), structure, escaping.

use runner::events::RunResult;
use runner::outcome::{Outcome, OutcomeKind};
use runner::report::junit::{render_junit, write_junit};

use crate::support::{assert_junit_xml_valid, xmllint_junit};
use runner_test_support::script;

fn named(mut r: RunResult, name: &str, kind: OutcomeKind, msg: &str) -> RunResult {
    r.task_name = name.into();
    r.outcome = Outcome::new(kind, msg);
    r
}

fn mixed() -> Vec<RunResult> {
    let mut api = named(
        script::success(),
        "api",
        OutcomeKind::ApiError,
        "429 after 6 attempts",
    );
    api.errors = vec!["rate_limit_error: Number of request tokens has exceeded".into()];
    api.result_text.clear();
    api.total_cost_usd = None;
    api.transcript_path = None;
    vec![
        script::success(),
        named(
            script::success(),
            "checks",
            OutcomeKind::ChecksFailed,
            "cargo test exited 101",
        ),
        api,
        named(
            script::success(),
            "later",
            OutcomeKind::Skipped,
            "not run: --fail-fast",
        ),
    ]
}

#[test]
fn mixed_outcomes_validate_and_count() {
    let xml = render_junit(&mixed(), "ci-1");
    assert_junit_xml_valid(&xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "testsuites");
    assert_eq!(root.attribute("name"), Some("runner"));
    assert_eq!(root.attribute("tests"), Some("4"));
    assert_eq!(root.attribute("failures"), Some("1"));
    assert_eq!(root.attribute("errors"), Some("1"));
    assert_eq!(root.attribute("skipped"), None, "junit-10.xsd forbids it");
    assert_eq!(root.attribute("time"), Some("17.284"));

    let suites: Vec<_> = root.children().filter(|n| n.is_element()).collect();
    assert_eq!(suites.len(), 4);
    let expect = [
        ("fix-typo", None, "0", "0", "0"),
        ("checks", Some("failure"), "1", "0", "0"),
        ("api", Some("error"), "0", "1", "0"),
        ("later", Some("skipped"), "0", "0", "1"),
    ];
    for (suite, (name, element, failures, errors, skipped)) in suites.iter().zip(expect) {
        assert_eq!(suite.attribute("name"), Some(name));
        assert_eq!(suite.attribute("tests"), Some("1"));
        assert_eq!(suite.attribute("failures"), Some(failures));
        assert_eq!(suite.attribute("errors"), Some(errors));
        assert_eq!(suite.attribute("skipped"), Some(skipped));
        assert_eq!(suite.attribute("time"), Some("4.321"));
        assert_eq!(suite.attribute("timestamp"), Some("2026-01-02T03:04:05"));
        assert_eq!(suite.attribute("hostname"), Some("ci-1"));
        let case = suite
            .children()
            .find(|n| n.has_tag_name("testcase"))
            .unwrap();
        assert_eq!(case.attribute("classname"), Some(name));
        assert_eq!(case.attribute("name"), Some("agent"));
        assert_eq!(case.attribute("file"), Some("tasks/fix-typo.yaml"));
        assert_eq!(case.attribute("line"), Some("2"));
        let verdicts: Vec<_> = case
            .children()
            .filter(|n| n.is_element() && !n.has_tag_name("system-out"))
            .collect();
        assert_eq!(verdicts.len(), usize::from(element.is_some()), "{name}");
        if let Some(el) = element {
            assert_eq!(verdicts[0].tag_name().name(), el);
            assert!(verdicts[0].attribute("type").is_some(), "type always set");
        }
    }

    // Properties of the error suite: unknown cost, no transcript.
    let props: Vec<(&str, &str)> = suites[2]
        .descendants()
        .filter(|n| n.has_tag_name("property"))
        .map(|n| (n.attribute("name").unwrap(), n.attribute("value").unwrap()))
        .collect();
    for want in [
        ("model", "claude-sonnet-4-5"),
        ("turns", "2"),
        ("input_tokens", "30"),
        ("output_tokens", "45"),
        ("cache_read_tokens", "4000"),
        ("cache_write_tokens", "200"),
        ("cost_usd", "unknown"),
        ("runner_outcome", "api_error"),
        ("transcript", ""),
        ("denials", "0"),
        ("exit_code", "4"),
    ] {
        assert!(props.contains(&want), "missing {want:?} in {props:?}");
    }
    let err = suites[2]
        .descendants()
        .find(|n| n.has_tag_name("error"))
        .unwrap();
    assert_eq!(err.attribute("type"), Some("api_error"));
    assert_eq!(err.attribute("message"), Some("429 after 6 attempts"));
    assert_eq!(
        err.text(),
        Some("rate_limit_error: Number of request tokens has exceeded")
    );
    let out = suites[0]
        .descendants()
        .find(|n| n.has_tag_name("system-out"))
        .unwrap();
    assert_eq!(
        out.text(),
        Some("Fixed the typo: `teh` → `the`.\n\nTranscript: .runner/fix-typo/session.jsonl\n")
    );
}

#[test]
fn hostile_text_is_stripped_and_escaped() {
    let nasty = "\u{1b}[31mred\u{1b}[0m bell\u{7} nul\u{0} cdata]]> tags<&>\"' tab\tend";
    let mut r = named(
        script::success(),
        "nasty <&>",
        OutcomeKind::AgentError,
        nasty,
    );
    r.errors = vec![format!("error: {nasty}")];
    r.result_text = format!("final: {nasty}\nline two");
    r.spec_path = "tasks/a&b.yaml".into();
    let xml = render_junit(&[r], "host\u{1b}[0m");
    assert_junit_xml_valid(&xml);
    assert!(!xml.contains('\u{1b}') && !xml.contains('\u{7}') && !xml.contains('\u{0}'));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let clean = "red bell nul cdata]]> tags<&>\"' tab\tend";
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("name"), Some("nasty <&>"));
    assert_eq!(suite.attribute("hostname"), Some("host"));
    let failure = doc
        .descendants()
        .find(|n| n.has_tag_name("failure"))
        .unwrap();
    assert_eq!(failure.attribute("type"), Some("agent_error"));
    assert_eq!(failure.attribute("message"), Some(clean));
    assert_eq!(
        failure.text().unwrap(),
        format!("error: {clean}\n\nFinal message:\nfinal: {clean}\nline two")
    );
    let case = doc
        .descendants()
        .find(|n| n.has_tag_name("testcase"))
        .unwrap();
    assert_eq!(case.attribute("file"), Some("tasks/a&b.yaml"));
}

#[test]
fn long_output_is_truncated_and_bad_timestamp_omitted() {
    let mut r = script::success();
    r.result_text = "x".repeat(200 * 1024);
    r.started_at = "2026-01-02T03:04:05+02:00".into();
    let xml = render_junit(&[r], "h");
    assert_junit_xml_valid(&xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let out = doc
        .descendants()
        .find(|n| n.has_tag_name("system-out"))
        .unwrap();
    let text = out.text().unwrap();
    assert!(text.len() < 65 * 1024, "{}", text.len());
    assert!(text.contains("[... truncated "));
    let suite = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .unwrap();
    assert_eq!(suite.attribute("timestamp"), None);
}

#[test]
fn empty_run_is_valid() {
    let xml = render_junit(&[], "h");
    assert_junit_xml_valid(&xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert_eq!(doc.root_element().attribute("tests"), Some("0"));
}

#[test]
fn write_junit_creates_dirs_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reports/junit.xml");
    write_junit(&path, &mixed()).unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();
    assert_junit_xml_valid(&xml);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let host = doc
        .descendants()
        .find(|n| n.has_tag_name("testsuite"))
        .and_then(|n| n.attribute("hostname"))
        .unwrap()
        .to_string();
    assert!(!host.is_empty());
    let entries: Vec<_> = std::fs::read_dir(dir.path().join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("junit.xml")]);
    // Overwrites an existing report.
    write_junit(&path, &mixed()[..1]).unwrap();
    let doc2 = std::fs::read_to_string(&path).unwrap();
    assert!(doc2.contains("tests=\"1\""));
}

#[test]
fn schema_check_is_not_vacuous() {
    // The same check must reject what junit-10.xsd forbids (`skipped` on <testsuites>).
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.xml");
    std::fs::write(
        &file,
        "<?xml version=\"1.0\"?>\n<testsuites skipped=\"0\"><testsuite name=\"a\" tests=\"1\"/></testsuites>\n",
    )
    .unwrap();
    let Some(out) = xmllint_junit(&file) else {
        return;
    };
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("'skipped' is not allowed"));
}
