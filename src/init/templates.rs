//! The specs `runner init NAME` writes: for a job it knows (`fix-tests`, `fix-lint`, `review`,
//! `docs`) a spec that does that job with the project's own commands; for any other name the
//! read-only starter. Each is valid as written.

use super::InitProvider;
use super::detect::Project;

/// The spec for task `name` in a project like `project` (`None`: nothing recognised), with the
/// `$schema` line pointing at `schema_url`, for `provider`.
pub(super) fn spec_for(
    name: &str,
    project: Option<&Project>,
    schema_url: &str,
    provider: InitProvider,
) -> String {
    let fallback;
    let (p, found) = match project {
        Some(p) => (p, format!("a {} project", p.kind)),
        None => {
            fallback = Project {
                kind: "unknown",
                test: "make test".into(),
                lint: "make lint".into(),
                rules: vec!["Bash(make test:*)".into(), "Bash(make lint:*)".into()],
            };
            (
                &fallback,
                "no build files recognised: replace `make test` and `make lint` with the project's commands".to_string(),
            )
        }
    };
    let body = match name {
        "fix-tests" => FIX_TESTS,
        "fix-lint" => FIX_LINT,
        "review" => REVIEW,
        "docs" => DOCS,
        _ => STARTER,
    };
    let quoted = |s: &str| serde_json::Value::from(s).to_string();
    let rules = format!(
        "[{}]",
        p.rules
            .iter()
            .map(|r| quoted(r))
            .collect::<Vec<_>>()
            .join(", ")
    );
    HEADER
        .replace("{body}", body)
        .replace("{provider}", provider.spec_line())
        .replace("{needs}", provider.needs())
        .replace("{schema_url}", schema_url)
        .replace("{name}", name)
        .replace("{found}", &found)
        .replace("{test_q}", &quoted(&p.test))
        .replace("{lint_q}", &quoted(&p.lint))
        .replace("{test}", &p.test)
        .replace("{lint}", &p.lint)
        .replace("{rules}", &rules)
}

const HEADER: &str = r#"# yaml-language-server: $schema={schema_url}
#
# A runner task spec ({found}). Check it, then run it:
#
#   runner validate tasks/{name}.yaml
#   runner exec tasks/{name}.yaml          # needs {needs}
#
# Paths in this file are relative to this file. `runner schema` prints every field.
name: {name}
{provider}{body}"#;

const FIX_TESTS: &str = r#"prompt: |
  Run `{test}`. If any test fails, find the cause and fix the code so that every test passes.
  Do not delete, skip or weaken a test. End with a short summary of what you changed and why.
model: claude-sonnet-4-5
workdir: ..                       # the repository root
tools: [Read, Write, Edit, Bash, Glob, Grep]
permissions:
  # acceptEdits: edits inside the workdir and read-only commands run; other commands need an
  # allow rule and are denied otherwise.
  mode: acceptEdits
  allow: {rules}
  deny: ["Bash(git push:*)"]
limits:
  max_turns: 40
  max_cost_usd: 3.0
  timeout: 30m
# Run after the agent finishes; a failure goes back to the agent once (attempts: 2).
verify:
  - name: tests
    run: {test_q}
attempts: 2
"#;

const FIX_LINT: &str = r#"prompt: |
  Run `{lint}` and fix every warning and error it reports without changing behaviour. Then
  run `{test}` to check that nothing broke. End with a short summary of what you changed.
model: claude-sonnet-4-5
workdir: ..                       # the repository root
tools: [Read, Write, Edit, Bash, Glob, Grep]
permissions:
  mode: acceptEdits               # edits and read-only commands run; others need a rule
  allow: {rules}
  deny: ["Bash(git push:*)"]
limits:
  max_turns: 40
  max_cost_usd: 3.0
  timeout: 30m
verify:
  - name: lint
    run: {lint_q}
  - name: tests
    run: {test_q}
attempts: 2
"#;

const REVIEW: &str = r#"prompt: |
  Review the changes of this branch: `git diff origin/HEAD...HEAD` (`git diff HEAD~1` when
  there is no remote). For each real problem (a bug, a missing test, a security issue, unclear
  code) give the file, the line and a concrete fix. Do not change any file. End with a verdict:
  approve, or request changes.
model: claude-sonnet-4-5
workdir: ..                       # the repository root
tools: [Read, Glob, Grep, Bash]   # no Edit or Write: a review changes nothing
permissions:
  # dontAsk: reads and read-only commands (git diff, git log, ...) run without a rule; the
  # tests may run to check a claim; anything else is denied.
  mode: dontAsk
  allow: {rules}
  deny: ["Bash(git push:*)"]
limits:
  max_turns: 30
  max_cost_usd: 2.0
  timeout: 20m
"#;

const DOCS: &str = r#"prompt: |
  Bring the documentation (README and docs/) up to date with the code: commands, options and
  examples that changed, and anything new that is not documented yet. Change documentation
  only (Markdown files and doc comments), never behaviour. End with a list of what you changed.
model: claude-sonnet-4-5
workdir: ..                       # the repository root
tools: [Read, Write, Edit, Bash, Glob, Grep]
permissions:
  mode: acceptEdits               # edits and read-only commands run; others need a rule
  allow: {rules}
  deny: ["Bash(git push:*)"]
limits:
  max_turns: 30
  max_cost_usd: 2.0
  timeout: 20m
# The code still builds and passes its tests after the doc comments changed.
verify:
  - name: tests
    run: {test_q}
"#;

const STARTER: &str = r#"prompt: |
  Summarize this repository for a new contributor: what it does, how to build it, and how to
  run its tests. Do not change any file.
model: claude-sonnet-4-5
workdir: ..                       # the repository root
tools: [Read, Glob, Grep, Bash]   # add Edit and Write to let the agent change files
permissions:
  # dontAsk: reads inside the workdir and read-only commands (ls, cat, git diff, ...) run
  # without a rule; anything else needs an allow rule and is denied otherwise.
  # acceptEdits: Edit/Write inside the workdir run too. plan: reads only.
  mode: dontAsk
  allow: []                       # e.g. {rules}
  deny: ["Bash(git push:*)"]
limits:
  max_turns: 20
  max_cost_usd: 1.0
  timeout: 15m
# Success checks, run in the workdir after the agent finishes; each is a JUnit testcase.
# verify:
#   - name: tests
#     run: {test}
# With attempts: 2, a failing check's output goes back to the agent once.
# attempts: 2
# `runner init fix-tests`, `fix-lint`, `review` or `docs` writes a spec that does that job.
"#;
