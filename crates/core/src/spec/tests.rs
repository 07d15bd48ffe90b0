//! Tests for loading and validating specs from files.

use std::fs;
use std::path::PathBuf;

use super::*;

/// A temporary directory holding a spec file.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn write(&self, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent).unwrap();
        }
        fs::write(&p, text).unwrap();
        p
    }

    fn load(&self, text: impl AsRef<[u8]>) -> Result<LoadedSpec, SpecError> {
        let p = self.write("task.yaml", text);
        load(&p)
    }

    fn err(&self, text: impl AsRef<[u8]>) -> SpecError {
        let e = self.load(text).unwrap_err();
        assert_eq!(e.file, self.path("task.yaml"));
        e
    }
}

fn pos(e: &SpecError) -> (usize, usize) {
    (e.line.unwrap(), e.column.unwrap())
}

const OK: &str = "name: t\nprompt: hi\n";

#[test]
fn minimal_spec_loads_with_defaults_and_resolved_paths() {
    let f = Fixture::new();
    let l = f
        .load("# comment\nname: fix-clippy.v2\nprompt: Fix it.\n")
        .unwrap();
    assert_eq!(l.spec.name, "fix-clippy.v2");
    assert_eq!(l.prompt, "Fix it.");
    assert_eq!(l.name_line, 2);
    assert_eq!(l.spec.model, "claude-sonnet-4-5");
    assert_eq!(l.spec.tools, super::DEFAULT_TOOLS);
    assert_eq!(l.spec.attempts, 1);
    assert_eq!(l.workdir, fs::canonicalize(f.dir.path()).unwrap());
    assert!(l.workdir.is_absolute());
    assert!(l.dir.is_absolute());
    assert_eq!(l.cassette, None);
    assert!(l.source.contains("fix-clippy.v2"));
    assert!(l.model_info().is_some());
}

#[test]
fn relative_paths_resolve_against_the_spec_directory() {
    let f = Fixture::new();
    f.write("specs/prompts/fix.md", "Do the thing.\n");
    f.write("specs/tapes/run.jsonl", "{}\n");
    fs::create_dir_all(f.path("repo/src")).unwrap();
    fs::create_dir_all(f.path("docs")).unwrap();
    let spec = f.write(
        "specs/t.yaml",
        "name: t\nprompt_file: prompts/fix.md\nworkdir: ../repo/src\nadditional_directories: [../docs]\nprovider: replay\ncassette: tapes/run.jsonl\n",
    );
    let l = load(&spec).unwrap();
    assert_eq!(l.prompt, "Do the thing.\n");
    assert_eq!(l.workdir, fs::canonicalize(f.path("repo/src")).unwrap());
    assert_eq!(
        l.additional_directories,
        vec![fs::canonicalize(f.path("docs")).unwrap()]
    );
    assert_eq!(l.cassette, Some(f.path("specs/tapes/run.jsonl")));
    assert_eq!(l.path, spec);
}

#[test]
fn tab_indentation_points_at_the_tab() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nlimits:\n\tmax_turns: 3\n");
    assert_eq!(pos(&e), (4, 1));
    assert!(
        e.message.contains("tab character used for indentation"),
        "{e}"
    );
    assert!(e.to_string().contains("task.yaml:4:1: "), "{e}");
}

#[test]
fn wrong_type_names_the_key_and_expected_type() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nlimits:\n  max_turns: lots\n");
    assert_eq!(pos(&e), (4, 14));
    assert_eq!(
        e.message,
        "limits.max_turns: invalid type: string \"lots\", expected a whole number from 0 to 4294967295"
    );
    assert_eq!(
        e.help(),
        Some("expected a whole number without quotes, e.g. `max_turns: 20`")
    );
    let e = f.err("name: t\nprompt: hi\ntools: Read\n");
    assert_eq!(pos(&e), (3, 8));
    assert!(e.message.contains("expected a list"), "{e}");
    assert!(e.help().unwrap().contains("`tools: [a, b]`"), "{e:?}");
}

#[test]
fn a_line_indented_too_deep_is_named_in_plain_words() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\n  limits: 3\n");
    assert_eq!(e.line, Some(3));
    assert!(
        e.message.starts_with(
            "line 3 is indented more than line 2 above it, which already has a value; indent line 3 by 0 space(s)"
        ),
        "{e}"
    );
    assert!(!e.message.contains("mapping values"), "{e}");
}

#[test]
fn a_misspelt_model_is_caught_with_the_closest_one() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nmodel: claude-sonet-4-5\n");
    assert_eq!(pos(&e), (3, 1));
    assert_eq!(
        e.help()
            .map(|h| h.starts_with("did you mean `claude-sonnet-4-5`?")),
        Some(true)
    );
    // A newer model the table does not know is not a typo.
    f.load("name: t\nprompt: hi\nmodel: claude-opus-5\n")
        .unwrap();
    f.load("name: t\nprompt: hi\nmodel: claude-sonnet-4-5-20250929\n")
        .unwrap();
    // With a cost limit, an unpriced model close to a built-in one gets the suggestion too.
    let e = f.err("name: t\nprompt: hi\nmodel: claude-opus-4-6\nlimits: {max_cost_usd: 1}\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(
        e.help().unwrap().contains("did you mean `claude-opus-4"),
        "{e:?}"
    );
}

#[test]
fn unknown_key_lists_the_allowed_keys() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nmax_turn: 3\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(
        e.message
            .starts_with("unknown field `max_turn`, expected one of `name`, `prompt`"),
        "{e}"
    );
    let e = f.err("name: t\nprompt: hi\npermissions:\n  mode: plan\n  alow: [Edit]\n");
    assert_eq!(pos(&e), (5, 3));
    assert!(
        e.message.contains("permissions: unknown field `alow`"),
        "{e}"
    );
    assert!(e.message.contains("`allow`"), "{e}");
}

#[test]
fn missing_or_doubled_prompt() {
    let f = Fixture::new();
    let e = f.err("name: t\nmodel: claude-opus-4-5\n");
    assert_eq!(pos(&e), (1, 1));
    assert!(
        e.message.starts_with("missing prompt: expected `prompt`"),
        "{e}"
    );
    assert!(e.message.contains("`prompt_file`"), "{e}");

    f.write("p.md", "x");
    let e = f.err("name: t\nprompt: hi\nprompt_file: p.md\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(e.message.contains("both `prompt` and `prompt_file`"), "{e}");

    let e = f.err("name: t\nprompt: \"  \"\n");
    assert_eq!(pos(&e), (2, 1));
    assert!(e.message.contains("`prompt` is empty"), "{e}");
}

#[test]
fn empty_file_or_only_comments() {
    let f = Fixture::new();
    for src in ["", "\n\n", "# just a comment\n# another\n", "---\n", "{}\n"] {
        let e = f.err(src);
        assert_eq!(pos(&e), (1, 1), "{src:?}");
        assert_eq!(
            e.message, "empty spec: expected a mapping with at least `name` and `prompt`",
            "{src:?}"
        );
    }
    let e = f.err("# c\n- a\n- b\n");
    assert_eq!(pos(&e), (2, 1));
    assert!(
        e.message.contains("the spec is a list; expected a mapping"),
        "{e}"
    );
}

#[test]
fn duplicate_key_points_at_the_second_one() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nname: u\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(e.message.starts_with("duplicate key `name`"), "{e}");
    let e = f.err("name: t\nprompt: hi\nlimits:\n  max_turns: 1\n  max_turns: 2\n");
    assert_eq!(pos(&e), (5, 3));
    assert!(
        e.message.starts_with("limits: duplicate key `max_turns`"),
        "{e}"
    );
}

#[test]
fn missing_unreadable_or_directory_spec_file() {
    let f = Fixture::new();
    let missing = f.path("nope.yaml");
    let e = load(&missing).unwrap_err();
    assert_eq!(e.file, missing);
    assert_eq!((e.line, e.column), (None, None));
    assert_eq!(e.message, "spec file does not exist");

    let e = load(f.dir.path()).unwrap_err();
    assert!(e.message.contains("is a directory"), "{e}");

    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let p = f.write("locked.yaml", OK);
        fs::set_permissions(&p, fs::Permissions::from_mode(0o000)).unwrap();
        // Root reads anything; only assert when the file really is unreadable.
        if fs::read(&p).is_err() {
            let e = load(&p).unwrap_err();
            assert!(e.message.contains("not readable: permission denied"), "{e}");
        }
    }
}

#[test]
fn non_utf8_names_the_position_of_the_bad_byte() {
    let f = Fixture::new();
    let e = f.err(b"name: t\nprompt: h\xffi\n".as_slice());
    assert_eq!(pos(&e), (2, 10));
    assert!(e.message.contains("not valid UTF-8 (byte 0xff)"), "{e}");
}

#[test]
fn huge_file_is_refused() {
    let f = Fixture::new();
    let mut text = String::from("name: t\nprompt: hi\n");
    while text.len() as u64 <= MAX_SPEC_BYTES {
        text.push_str("# padding padding padding padding padding padding padding\n");
    }
    let e = f.err(text);
    assert!(
        e.message.contains("the limit is 1048576 bytes (1 MiB)"),
        "{e}"
    );
}

#[test]
fn alias_bomb_is_refused() {
    let f = Fixture::new();
    let mut src = String::from("a: &a [x,x,x,x,x,x,x,x,x]\n");
    for (prev, name) in ["a", "b", "c", "d", "e", "f", "g", "h"]
        .windows(2)
        .map(|w| (w[0], w[1]))
    {
        src.push_str(&format!(
            "{name}: &{name} [{}]\n",
            vec![format!("*{prev}"); 9].join(",")
        ));
    }
    let e = f.err(src);
    assert!(e.message.contains("repetition limit exceeded"), "{e}");
    assert!(e.message.contains("alias"), "{e}");
}

#[test]
fn more_than_one_document() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\n---\nname: u\nprompt: hi\n");
    assert!(e.message.contains("expected one spec per file"), "{e}");
}

#[test]
fn bad_names() {
    let f = Fixture::new();
    for (name, want) in [
        ("\"\"", "`name` is empty"),
        ("fix clippy", "contains ' '"),
        ("a/b", "contains '/'"),
        ("..", "only dots"),
    ] {
        let e = f.err(format!("prompt: hi\nname: {name}\n"));
        assert_eq!(pos(&e), (2, 1), "{name}");
        assert!(e.message.contains(want), "{name}: {e}");
    }
    let long = "a".repeat(validate::MAX_NAME_LEN + 1);
    let e = f.err(format!("name: {long}\nprompt: hi\n"));
    assert!(e.message.contains("at most"), "{e}");
}

#[test]
fn zero_attempts() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nattempts: 0\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(e.message.contains("expected at least 1"), "{e}");
}

#[test]
fn workdir_missing_or_not_a_directory() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nworkdir: gone\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(e.message.starts_with("workdir gone"), "{e}");
    assert!(
        e.message.contains("does not exist; expected a directory"),
        "{e}"
    );

    f.write("file.txt", "x");
    let e = f.err("name: t\nprompt: hi\nworkdir: file.txt\n");
    assert!(e.message.contains("is not a directory"), "{e}");

    let e = f.err("name: t\nprompt: hi\nadditional_directories:\n  - .\n  - nowhere\n");
    assert_eq!(pos(&e), (5, 5));
    assert!(e.message.starts_with("additional directory nowhere"), "{e}");
}

#[test]
fn prompt_file_missing_or_empty() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt_file: prompts/none.md\n");
    assert_eq!(pos(&e), (2, 1));
    assert!(
        e.message
            .starts_with("prompt_file prompts/none.md (resolved to "),
        "{e}"
    );
    assert!(e.message.ends_with("none.md) does not exist"), "{e}");

    f.write("empty.md", "\n  \n");
    let e = f.err("name: t\nprompt_file: empty.md\n");
    assert!(e.message.contains("is empty"), "{e}");

    f.write("bad.md", b"ok\n\xc3(".as_slice());
    let e = f.err("name: t\nprompt_file: bad.md\n");
    assert_eq!(pos(&e), (2, 1));
    assert!(e.message.contains("not valid UTF-8"), "{e}");
}

#[test]
fn replay_needs_an_existing_cassette() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nprovider: replay\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(e.message.contains("needs `cassette: FILE`"), "{e}");

    let e = f.err("name: t\nprompt: hi\nprovider: replay\ncassette: tapes/x.jsonl\n");
    assert_eq!(pos(&e), (4, 1));
    assert!(e.message.contains("does not exist"), "{e}");

    f.write("x.jsonl", "{}\n");
    let e = f.err("name: t\nprompt: hi\ncassette: x.jsonl\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(
        e.message.contains("only used with `provider: replay`"),
        "{e}"
    );
}

#[test]
fn openai_provider_and_settings() {
    let f = Fixture::new();
    let l = f
        .load(
            "name: t\nprompt: hi\nprovider: openai\nmodel: qwen2.5-coder\nopenai:\n  base_url: http://localhost:11434/v1\n  api_key_env: \"\"\n  include_usage: false\n",
        )
        .unwrap();
    let o = l.spec.openai.unwrap();
    assert_eq!(o.base_url.as_deref(), Some("http://localhost:11434/v1"));
    assert_eq!(o.api_key_env.as_deref(), Some(""));
    assert_eq!(o.include_usage, Some(false));

    let e = f.err("name: t\nprompt: hi\nopenai:\n  include_usage: false\n");
    assert_eq!(pos(&e), (3, 1));
    assert!(
        e.message.contains("only used with `provider: openai`"),
        "{e}"
    );

    let e = f.err("name: t\nprompt: hi\nprovider: openai\nopenai:\n  api_key_env: my-key\n");
    assert_eq!(pos(&e), (5, 3));
    assert!(
        e.message.contains("not an environment variable name"),
        "{e}"
    );

    let e = f.err("name: t\nprompt: hi\nprovider: openai\nopenai:\n  base_url: localhost:8000\n");
    assert_eq!(pos(&e), (5, 3));
    assert!(e.message.contains("not an http(s) URL"), "{e}");

    let e = f.err("name: t\nprompt: hi\nprovider: openai\nopenai:\n  base: x\n");
    assert!(e.message.contains("base"), "{e}");
}

#[test]
fn replay_mode_parses() {
    let f = Fixture::new();
    let l = f
        .load("name: t\nprompt: hi\nreplay_mode: strict\n")
        .unwrap();
    assert_eq!(l.spec.replay_mode, ReplayMode::Strict);
    let l = f.load("name: t\nprompt: hi\n").unwrap();
    assert_eq!(l.spec.replay_mode, ReplayMode::Lenient);
    let e = f.err("name: t\nprompt: hi\nreplay_mode: exact\n");
    assert_eq!(pos(&e).0, 3);
}

#[test]
fn max_cost_needs_a_priced_model() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nmodel: my-model\nlimits:\n  max_cost_usd: 2\n");
    // On the `model:` line: the model is what lacks a price.
    assert_eq!(pos(&e), (3, 1));
    assert!(e.message.contains("`my-model` has no price"), "{e}");

    // A spec override without prices is still unpriced.
    let e = f.err(
        "name: t\nprompt: hi\nmodel: my-model\nmodels:\n  my-model: {context_window: 1000}\nlimits:\n  max_cost_usd: 2\n",
    );
    assert_eq!(pos(&e), (3, 1));

    // With prices it loads, and cost is known.
    let l = f
        .load("name: t\nprompt: hi\nmodel: my-model\nmodels:\n  my-model:\n    input_usd_per_mtok: 1\n    output_usd_per_mtok: 2\nlimits:\n  max_cost_usd: 2\n")
        .unwrap();
    assert_eq!(l.model_info().unwrap().prices.unwrap().output, 2.0);

    // Built-in models are priced.
    f.load("name: t\nprompt: hi\nmodel: claude-haiku-4-5-20251001\nlimits: {max_cost_usd: 0.5}\n")
        .unwrap();
}

#[test]
fn negative_or_nan_costs() {
    let f = Fixture::new();
    for v in ["-1", ".nan", "0", ".inf"] {
        let e = f.err(format!(
            "name: t\nprompt: hi\nlimits:\n  max_cost_usd: {v}\n"
        ));
        assert_eq!(pos(&e), (4, 3), "{v}");
        assert!(
            e.message.contains("expected a positive amount in USD"),
            "{v}: {e}"
        );
    }
    let e = f.err("name: t\nprompt: hi\nmodels:\n  \"m.1\":\n    input_usd_per_mtok: -3\n    output_usd_per_mtok: 1\n");
    assert_eq!(pos(&e), (5, 5));
    assert!(e.message.contains("expected a price of 0 or more"), "{e}");

    let e = f.err("name: t\nprompt: hi\nmodels:\n  m:\n    input_usd_per_mtok: 3\n");
    assert_eq!(pos(&e), (4, 3));
    assert!(e.message.contains("expected both"), "{e}");
}

#[test]
fn token_limits() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nlimits:\n  max_turns: 0\n");
    assert_eq!(pos(&e), (4, 3));
    let e = f.err("name: t\nprompt: hi\nlimits:\n  timeout: 0s\n");
    assert!(e.message.contains("`timeout` is 0"), "{e}");
    let e = f.err("name: t\nprompt: hi\nmodel: claude-3-5-haiku\nmax_tokens: 9000\n");
    assert_eq!(pos(&e), (4, 1));
    assert!(e.message.contains("outputs at most 8192"), "{e}");
    let e = f.err("name: t\nprompt: hi\nthinking_budget_tokens: 100\n");
    assert!(e.message.contains("at least 1024"), "{e}");
    let e = f.err("name: t\nprompt: hi\nmax_tokens: 4000\nthinking_budget_tokens: 4000\n");
    assert_eq!(pos(&e), (4, 1));
    assert!(e.message.contains("expected less than that"), "{e}");
    f.load("name: t\nprompt: hi\nmax_tokens: 4000\nthinking_budget_tokens: 2000\n")
        .unwrap();
}

#[test]
fn secrets_and_verify_checks() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nsecrets: [NPM_TOKEN, \"bad-name\"]\n");
    assert_eq!(pos(&e), (3, 22));
    assert!(
        e.message.contains("not an environment variable name"),
        "{e}"
    );
    let e = f.err("name: t\nprompt: hi\nverify:\n  - run: cargo test\n  - run: \"\"\n");
    assert_eq!(pos(&e), (5, 5));
    assert!(e.message.contains("expected a shell command"), "{e}");
    let l = f
        .load("name: t\nprompt: hi\nverify:\n  - run: cargo test\n    timeout: 5m\n    env: {RUST_BACKTRACE: \"1\"}\n")
        .unwrap();
    assert_eq!(l.spec.verify[0].timeout.unwrap().0.as_secs(), 300);
}

#[test]
fn check_runs_again_after_cli_overrides() {
    let f = Fixture::new();
    let mut l = f
        .load("name: t\nprompt: hi\nlimits:\n  max_cost_usd: 1\n")
        .unwrap();
    l.check().unwrap();
    l.spec.model = "unpriced-model".into();
    let e = l.check().unwrap_err();
    assert_eq!(pos(&e), (4, 3));
    assert!(e.message.contains("`unpriced-model` has no price"), "{e}");

    l.spec.model = "claude-opus-4-5".into();
    l.spec.limits.max_turns = Some(0);
    let e = l.check().unwrap_err();
    // Not written in the spec: falls back to the `limits` key.
    assert_eq!(pos(&e), (3, 1));

    l.spec.limits.max_turns = Some(5);
    l.spec.permissions.mode = PermissionMode::BypassPermissions;
    l.check().unwrap();
}

#[test]
fn spec_error_at_and_locate() {
    let f = Fixture::new();
    let l = f
        .load("name: t\nprompt: hi\npermissions:\n  allow:\n    - Edit\n    - \"Bash(rm\"\n")
        .unwrap();
    assert_eq!(l.locate("permissions.allow[1]"), (6, 7));
    let e = SpecError::at(&l, "permissions.allow[1]", "unbalanced parenthesis");
    assert_eq!(
        e.to_string(),
        format!(
            "{}:6:7: unbalanced parenthesis",
            f.path("task.yaml").display()
        )
    );
}

#[test]
fn bad_duration_and_enum_values() {
    let f = Fixture::new();
    let e = f.err("name: t\nprompt: hi\nlimits:\n  timeout: 5x\n");
    assert_eq!(pos(&e), (4, 12));
    assert!(e.message.contains("unknown unit `x`"), "{e}");
    let e = f.err("name: t\nprompt: hi\npermissions:\n  mode: yolo\n");
    assert_eq!(pos(&e), (4, 9));
    assert!(
        e.message
            .contains("expected one of `default`, `acceptEdits`"),
        "{e}"
    );
}

#[test]
fn missing_name() {
    let f = Fixture::new();
    let e = f.err("prompt: hi\n");
    assert_eq!(pos(&e), (1, 1));
    assert!(e.message.starts_with("missing field `name`"), "{e}");
}

#[test]
fn context_section() {
    let f = Fixture::new();
    let spec = f
        .load("name: t\nprompt: hi\ncontext:\n  autocompact_threshold: 0.7\n  microcompact_keep_turns: 5\n")
        .unwrap()
        .spec;
    let p = crate::agent::context::ContextPolicy::from_settings(&spec.context);
    assert_eq!(p.autocompact_threshold, 0.7);
    assert_eq!(p.microcompact_keep_turns, 5);
    assert!(p.autocompact, "unset fields keep their defaults");
    assert_eq!(p.microcompact_threshold, 0.5);

    let e = f.err("name: t\nprompt: hi\ncontext:\n  autocompact_threshold: 1.5\n");
    assert_eq!(pos(&e), (4, 3));
    assert!(e.message.contains("at most 1"), "{e}");
    let e = f.err("name: t\nprompt: hi\ncontext:\n  microcompact_threshold: 0\n");
    assert_eq!(pos(&e), (4, 3));
    assert!(e.message.contains("above 0"), "{e}");
    let e = f.err("name: t\nprompt: hi\ncontext:\n  window: 1000\n");
    assert!(e.message.contains("window"), "{e}");
}
