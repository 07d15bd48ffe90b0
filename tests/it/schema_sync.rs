//! The committed `schema/task.schema.json` matches the generated schema, and the schema
//! accepts and rejects the right specs; the committed event schemas match theirs, with the
//! version raised as the change needs.
//!
//! Regenerate the committed file with `UPDATE_SCHEMA=1 cargo test --test it schema_sync`.

use std::path::PathBuf;

use runner::event_schema::{SCHEMA_VERSION, VERSION_KEY, compat, event_schemas};
use runner::spec::schema::{task_schema, task_schema_pretty};

fn committed_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema/task.schema.json")
}

#[test]
fn committed_schema_is_up_to_date() {
    let generated = task_schema_pretty();
    let path = committed_path();
    if std::env::var_os("UPDATE_SCHEMA").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with the TaskSpec types; regenerate it with \
         `UPDATE_SCHEMA=1 cargo test --test it schema_sync` and commit the result",
        path.display()
    );
}

fn yaml_to_json(src: &str) -> serde_json::Value {
    let v: yaml_serde::Value = yaml_serde::from_str(src).unwrap();
    serde_json::to_value(v).unwrap()
}

fn errors(src: &str) -> Vec<String> {
    let validator = jsonschema::validator_for(&task_schema()).unwrap();
    let instance = yaml_to_json(src);
    validator
        .iter_errors(&instance)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

#[test]
fn schema_has_id_title_and_draft() {
    let s = task_schema();
    assert_eq!(
        s["$id"],
        "https://github.com/your-org/runner/releases/latest/download/task.schema.json"
    );
    assert_eq!(s["title"], "runner task spec v1");
    assert_eq!(s["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert_eq!(s["additionalProperties"], false);
    let required: Vec<&str> = s["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(required, ["name"]);
    assert_eq!(s["properties"]["model"]["default"], "claude-sonnet-4-5");
}

#[test]
fn schema_accepts_valid_specs() {
    let examples = [
        "name: t\nprompt: hi\n",
        "name: t\nprompt_file: prompts/fix.md\nworkdir: ..\n",
        r#"
# yaml-language-server: $schema=../schema/task.schema.json
name: fix-clippy
prompt: |
  Run `cargo clippy` and fix every warning without changing behaviour.
model: claude-sonnet-4-5
provider: anthropic
system_prompt_append: "Be brief."
workdir: .
tools: [Read, Write, Edit, Bash, Glob, Grep]
secrets: [NPM_TOKEN]
permissions:
  mode: dontAsk
  allow: ["Edit", "Bash(cargo clippy:*)", "Bash(cargo test:*)"]
  deny: ["Bash(git push:*)"]
  fail_on_denial: true
limits:
  max_turns: 30
  max_total_tokens: 2000000
  max_cost_usd: 5.0
  timeout: 30m
verify:
  - run: cargo test --quiet
    name: tests
    timeout: 600
    env: {RUST_BACKTRACE: "1"}
attempts: 2
max_tokens: 16000
thinking_budget_tokens: 4000
models:
  claude-sonnet-4-5: {context_window: 1000000}
"#,
        "name: r\nprompt: hi\nprovider: replay\ncassette: tapes/r.jsonl\nlimits: {timeout: 1h30m}\n",
    ];
    for src in examples {
        let errs = errors(src);
        assert!(errs.is_empty(), "{src}\n{errs:#?}");
    }
}

#[test]
fn schema_rejects_invalid_specs() {
    let cases = [
        ("name: t\nprompt: hi\nbogus: 1\n", ""),
        (
            "name: t\nprompt: hi\nlimits:\n  max_turns: lots\n",
            "/limits/max_turns",
        ),
        (
            "name: t\nprompt: hi\nlimits:\n  max_turns: -1\n",
            "/limits/max_turns",
        ),
        (
            "name: t\nprompt: hi\nlimits:\n  timeout: 5x\n",
            "/limits/timeout",
        ),
        (
            "name: t\nprompt: hi\npermissions: {mode: yolo}\n",
            "/permissions/mode",
        ),
        ("name: t\nprompt: hi\nprovider: gemini\n", "/provider"),
        ("name: t\nprompt: hi\ntools: Read\n", "/tools"),
        (
            "name: t\nprompt: hi\nverify:\n  - name: no-run\n",
            "/verify/0",
        ),
        ("prompt: hi\n", ""),
    ];
    for (src, path) in cases {
        let errs = errors(src);
        assert!(
            errs.iter().any(|e| e.starts_with(&format!("{path}: "))),
            "{src}: expected an error at {path:?}, got {errs:#?}"
        );
    }
}

/// Each committed event schema (`schema/*.schema.json` but the task spec's) equals the one
/// generated from the types, and records [`SCHEMA_VERSION`]. With `UPDATE_SCHEMA=1` the files
/// are rewritten, but only when the version was raised as far as the change needs (a field
/// added: minor; removed or changed: major; words: patch).
#[test]
fn committed_event_schemas_are_up_to_date() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("schema");
    let update = std::env::var_os("UPDATE_SCHEMA").is_some();
    let mut problems = Vec::new();
    for s in event_schemas() {
        assert_eq!(s.schema[VERSION_KEY], SCHEMA_VERSION, "{}", s.file);
        let path = dir.join(s.file);
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        if committed == s.pretty() {
            continue;
        }
        let version_problem = serde_json::from_str::<serde_json::Value>(&committed)
            .ok()
            .and_then(|old| compat::version_error(&old, &s.schema, SCHEMA_VERSION));
        match (update, version_problem) {
            (true, None) => std::fs::write(&path, s.pretty()).unwrap(),
            (true, Some(why)) => problems.push(format!("{}: not rewritten: {why}", s.file)),
            (false, why) => problems.push(format!(
                "{} is out of date with the types; regenerate it with `UPDATE_SCHEMA=1 cargo \
                 test --test it schema_sync` and commit it{}",
                s.file,
                why.map(|w| format!(" (first: {w})")).unwrap_or_default()
            )),
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The published file names are the ones the release attaches and the docs name.
#[test]
fn event_schema_files_are_the_published_ones() {
    let names: Vec<&str> = event_schemas().iter().map(|s| s.file).collect();
    assert_eq!(
        names,
        [
            "stream-json.schema.json",
            "transcript.schema.json",
            "result-message.schema.json",
            "result-file.schema.json",
            "step-outputs.schema.json"
        ]
    );
    let release = std::fs::read_to_string(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".github/workflows/release.yml"),
    )
    .unwrap();
    assert!(
        release.contains("schema/*.schema.json"),
        "the release attaches every schema"
    );
    let docs =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/src/cli.md"))
            .unwrap();
    for n in names {
        assert!(docs.contains(n), "docs/src/cli.md names {n}");
    }
    assert!(docs.contains(SCHEMA_VERSION), "the docs name the version");
}
