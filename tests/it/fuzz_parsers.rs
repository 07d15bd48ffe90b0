//! Property tests over the parsers that read outside input: the SSE event stream (both
//! providers, through the block assembler), the task spec loader (with the key locator its
//! errors use) and the transcript reader (with the resume that builds on it). Each runs a few
//! thousand inputs made by mutating real fixtures (bytes flipped, inserted, deleted,
//! duplicated, cut, and format tokens spliced in) and checks that nothing panics, that every
//! input ends in a value or an error, and that no input takes long.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use runner::model::ProviderError;
use runner::model::assembler::Assembler;

/// The longest any one input may take (debug build, loaded machine). The slowest inputs
/// found this way were quadratic blow-ups.
const SLOW: Duration = Duration::from_secs(3);

/// One edit of a seed.
#[derive(Debug, Clone)]
enum Edit {
    /// Flip one bit at a position (taken modulo the length).
    Flip(usize, u8),
    /// Insert bytes at a position.
    Insert(usize, Vec<u8>),
    /// Insert one of the format's tokens at a position.
    Token(usize, usize),
    /// Delete up to `n` bytes at a position.
    Delete(usize, usize),
    /// Copy up to `n` bytes from one position to another.
    Duplicate(usize, usize, usize),
    /// Cut the input at a position.
    Truncate(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        1 => (any::<usize>(), 0u8..8).prop_map(|(a, b)| Edit::Flip(a, b)),
        1 => (any::<usize>(), proptest::collection::vec(any::<u8>(), 1..6))
            .prop_map(|(a, b)| Edit::Insert(a, b)),
        5 => (any::<usize>(), any::<usize>()).prop_map(|(a, t)| Edit::Token(a, t)),
        2 => (any::<usize>(), 1usize..64).prop_map(|(a, n)| Edit::Delete(a, n)),
        2 => (any::<usize>(), 1usize..256, any::<usize>())
            .prop_map(|(a, n, b)| Edit::Duplicate(a, n, b)),
        1 => any::<usize>().prop_map(Edit::Truncate),
    ]
}

/// `seed` with `edits` applied, splicing in `tokens` for [`Edit::Token`].
fn mutate(seed: &[u8], edits: &[Edit], tokens: &[&[u8]]) -> Vec<u8> {
    let mut v = seed.to_vec();
    for e in edits {
        let at = |p: usize, len: usize| if len == 0 { 0 } else { p % (len + 1) };
        match e {
            Edit::Flip(p, bit) if !v.is_empty() => {
                let i = p % v.len();
                v[i] ^= 1 << bit;
            }
            Edit::Flip(..) => {}
            Edit::Insert(p, bytes) => {
                let i = at(*p, v.len());
                v.splice(i..i, bytes.iter().copied());
            }
            Edit::Token(p, t) => {
                let i = at(*p, v.len());
                v.splice(i..i, tokens[t % tokens.len()].iter().copied());
            }
            Edit::Delete(p, n) => {
                let i = at(*p, v.len());
                let end = (i + n).min(v.len());
                v.drain(i..end);
            }
            Edit::Duplicate(p, n, to) => {
                let i = at(*p, v.len());
                let piece: Vec<u8> = v[i..(i + n).min(v.len())].to_vec();
                let j = at(*to, v.len());
                v.splice(j..j, piece);
            }
            Edit::Truncate(p) => {
                let i = at(*p, v.len());
                v.truncate(i);
            }
        }
    }
    v
}

/// Run `cases` mutated inputs through `check`: each a seed from `seeds` with 1 to 4 edits
/// (few enough that most inputs still get past the first line of the parser).
fn fuzz(cases: u32, seeds: &[Vec<u8>], tokens: &[&[u8]], check: impl Fn(&[u8])) {
    let mut runner = TestRunner::new(Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    });
    let strategy = (0..seeds.len(), proptest::collection::vec(edit(), 1..5));
    let result = runner.run(&strategy, |(seed, edits)| {
        let input = mutate(&seeds[seed], &edits, tokens);
        let start = Instant::now();
        check(&input);
        let took = start.elapsed();
        prop_assert!(
            took < SLOW,
            "took {took:?} on {:?}",
            String::from_utf8_lossy(&input)
        );
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

fn fixtures(dir: &str, ext: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut out: Vec<(PathBuf, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

// ---------------------------------------------------------------------------------------------
// SSE event streams

const SSE_TOKENS: &[&[u8]] = &[
    b"\n\n",
    b"\r\n",
    b"\n",
    b"data: ",
    b"event: ",
    b": keep-alive\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b"\\",
    b"\xff",
    b"\xef\xbb\xbf",
    b"null",
    b"-1",
    b"1e999",
    b"18446744073709551615",
    b"99999999999999999999999",
    b"\"index\":",
    b"\"type\":\"message_stop\"",
    b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    b"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    b"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}\n\n",
    b"data: [DONE]\n\n",
    b"\"finish_reason\":\"length\"",
    b"\"tool_calls\":[{\"index\":4294967296}]",
];

/// Feed `bytes` in chunks of `chunk` bytes through both providers' event streams and the
/// assembler; every stream must end.
async fn run_sse(bytes: &[u8], chunk: usize) {
    let chunks = || {
        let parts: Vec<Result<bytes::Bytes, std::io::Error>> = bytes
            .chunks(chunk.max(1))
            .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
            .collect();
        futures_util::stream::iter(parts)
    };
    let idle = Duration::from_secs(30);
    let anthropic = runner::model::anthropic::event_stream(chunks(), idle);
    let openai = runner::model::openai::event_stream(
        chunks(),
        idle,
        runner::model::openai::ChunkMapper::new("m", Some(Default::default())),
        || {},
    );
    for mut events in [anthropic, openai] {
        let mut asm = Assembler::new();
        let mut failed: Option<ProviderError> = None;
        let mut n = 0usize;
        while let Some(item) = events.next().await {
            n += 1;
            assert!(n < 1_000_000, "the event stream does not end");
            match item {
                Ok(ev) => {
                    if let Err(e) = asm.push(ev) {
                        failed = Some(e);
                        break;
                    }
                }
                Err(e) => {
                    failed = Some(e);
                    break;
                }
            }
        }
        if failed.is_none() {
            let _ = asm.finish(None);
        }
    }
}

#[test]
fn sse_streams_never_panic() {
    let mut seeds: Vec<Vec<u8>> = fixtures("tests/fixtures/sse", "sse")
        .into_iter()
        .chain(fixtures("tests/fixtures/openai", "sse"))
        .map(|(_, b)| b)
        .collect();
    seeds.push(Vec::new());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let i = std::cell::Cell::new(0usize);
    fuzz(2000, &seeds, SSE_TOKENS, |bytes| {
        i.set(i.get() + 1);
        // Whole, and split at odd places (mid-line, mid-UTF-8).
        let chunk = [usize::MAX, 1, 7, 64][i.get() % 4];
        rt.block_on(run_sse(bytes, chunk));
    });
}

// ---------------------------------------------------------------------------------------------
// Task specs

const SPEC_SEEDS: &[&str] = &[
    "name: t\nprompt: hi\n",
    "# comment\nname: fix-{{crate}}\nprompt: |\n  Fix the failing tests in {{crate}}.\n  Keep the diff small.\nmodel: claude-sonnet-4-5\nworkdir: .\ntools: [Read, Glob, Grep, Bash, Edit, Write]\nmatrix:\n  crate: [alpha, beta]\npermissions:\n  mode: acceptEdits\n  allow: [\"Bash(cargo test:*)\", \"Read\"]\n  deny: [\"Bash(rm:*)\"]\nlimits:\n  max_turns: 30\n  max_total_tokens: 2000000\n  max_cost_usd: 2.5\n  timeout: 30m\nretry:\n  max_retries: 5\n  base_delay: 500ms\n  max_wait: 2m\nverify:\n  - name: tests\n    run: cargo test\n    timeout: 10m\n    env: {RUST_LOG: debug}\nattempts: 2\n",
    "name: out\nprompt: \"summarize\"\nprovider: openai\nmodel: gpt-4o-mini\nopenai:\n  base_url: http://localhost:11434/v1\n  api_key_env: \"\"\n  include_usage: false\nmodels:\n  gpt-4o-mini: {context_window: 128000, max_output_tokens: 16384, input_usd_per_mtok: 0.15, output_usd_per_mtok: 0.6}\noutput:\n  schema:\n    type: object\n    properties:\n      summary: {type: string}\n      files: {type: array, items: {type: string}}\n    required: [summary]\ncontext:\n  autocompact: true\n  autocompact_threshold: 0.8\n  microcompact_keep_turns: 2\n",
    "name: hooks\nprompt: 'do it'\nhooks:\n  PreToolUse:\n    - matcher: \"Bash|Edit\"\n      hooks:\n        - type: command\n          command: ./check.sh\n          timeout: 5\n  Stop:\n    - hooks:\n        - {type: command, command: \"true\"}\ngit:\n  branch: true\n  author: {name: Bot, email: bot@example.com}\nsystem_prompt_append: >\n  Be brief.\nthinking_budget_tokens: 2048\nmax_tokens: 8000\nprompt_caching: false\nsecrets: [API_TOKEN]\n",
    "name: lint-{{basename}}\nprompt: lint {{path}}\nworkdir: \"{{path}}\"\nmatrix:\n  glob: crates/*\nadditional_directories: [../shared]\n",
    "name: anchors\nprompt: hi\nverify:\n  - &check {run: \"true\", timeout: 1m}\n  - *check\nlimits: &l {max_turns: 3}\n",
];

const YAML_TOKENS: &[&[u8]] = &[
    b"\n",
    b"\n  ",
    b"\t",
    b": ",
    b"- ",
    b"[",
    b"]",
    b"{",
    b"}",
    b",",
    b"\"",
    b"'",
    b"#",
    b"|",
    b">-",
    b"&a ",
    b"*a",
    b"!!binary ",
    b"? ",
    b"---\n",
    b"...\n",
    b"~",
    b"{{",
    b"}}",
    b"{{crate}}",
    b"18446744073709551616",
    b"-1",
    b".nan",
    b"1e999",
    b"\xef\xbb\xbf",
    b"\xc3",
    b"\\u0000",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    b"matrix:\n  k: [1, 2, 3]\n",
    b"name: ",
    b"prompt_file: p.txt\n",
];

#[test]
fn spec_loading_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("crates/alpha")).unwrap();
    std::fs::write(dir.path().join("p.txt"), "the prompt").unwrap();
    let mut seeds: Vec<Vec<u8>> = SPEC_SEEDS.iter().map(|s| s.as_bytes().to_vec()).collect();
    seeds.extend(
        fixtures("tasks/examples", "yaml")
            .into_iter()
            .map(|(_, b)| b),
    );
    let path = dir.path().join("task.yaml");
    fuzz(1500, &seeds, YAML_TOKENS, |bytes| {
        std::fs::write(&path, bytes).unwrap();
        if let Ok(specs) = runner::spec::load_all(&path) {
            for s in &specs {
                let _ = s.check();
            }
        }
        // The locator errors use reads any text.
        let text = String::from_utf8_lossy(bytes);
        for key in [
            "name",
            "limits.max_turns",
            "permissions.allow[1]",
            "verify[0].run",
            "hooks.PreToolUse[0].hooks[0].timeout",
            "models[\"gpt-4o-mini\"].context_window",
            "matrix.crate[1]",
        ] {
            let (line, column) = runner::spec::locate::locate(&text, key);
            assert!(line >= 1 && column >= 1);
        }
    });
}

// ---------------------------------------------------------------------------------------------
// Transcripts

/// A runner transcript (from the full-run snapshot) as JSON lines, with `repo` for the
/// snapshot's repository placeholder and a keyless provider in its spec (so a resume gets
/// past the workdir and API key checks, to the conversation and the totals).
fn runner_transcript(repo: &Path) -> Vec<u8> {
    let snap = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/it/snapshots/it__exec_outputs__transcript_full_run.snap"),
    )
    .unwrap();
    let snap = snap.replace("[REPO]", &repo.display().to_string());
    let json = snap.splitn(3, "---\n").nth(2).unwrap();
    let mut records: Vec<serde_json::Value> = serde_json::from_str(json).unwrap();
    let init = &mut records[0];
    assert_eq!(init["subtype"], "runner_init");
    init["spec"]["provider"] = "openai".into();
    init["spec"]["openai"] = serde_json::json!({"api_key_env": ""});
    records
        .iter()
        .map(|r| format!("{r}\n"))
        .collect::<String>()
        .into_bytes()
}

const JSONL_TOKENS: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b"null",
    b"\xef\xbb\xbf",
    b"\xff",
    b"\"parentUuid\":null,",
    b"\"isSidechain\":true,",
    b"\"type\":\"assistant\",",
    b"\"type\":\"user\",",
    b"\"subtype\":\"compact_boundary\",",
    b"\"subtype\":\"runner_attempt_abandoned\",",
    b"\"content\":[{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"Bash\",\"input\":{}}],",
    b"\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\"}],",
    b"\"usage\":{\"output_tokens\":18446744073709551615},",
    b"{\"type\":\"summary\"}\n",
];

#[test]
fn transcript_reading_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let mut seeds: Vec<Vec<u8>> = fixtures("tests/fixtures/transcripts", "jsonl")
        .into_iter()
        .map(|(_, b)| {
            // The first dozen records: enough structure, quick to read.
            let text = String::from_utf8_lossy(&b).into_owned();
            text.lines()
                .take(12)
                .map(|l| format!("{l}\n"))
                .collect::<String>()
                .into_bytes()
        })
        .collect();
    // runner's own transcript, whole and as a run killed before its result record.
    let runner = runner_transcript(dir.path());
    let mut killed = runner.clone();
    killed.truncate(
        runner[..runner.len() - 1]
            .iter()
            .rposition(|b| *b == b'\n')
            .unwrap_or(0)
            + 1,
    );
    seeds.push(runner);
    seeds.push(killed);
    let path = dir.path().join("t.jsonl");
    let req = runner::prepare::resume::ResumeRequest {
        transcript: path.clone(),
        spec: None,
        use_current_spec: false,
        prompt: Some("go on".into()),
    };
    fuzz(1500, &seeds, JSONL_TOKENS, |bytes| {
        if let Ok(t) = runner::transcript::reader::parse_transcript(&path, bytes) {
            let _ = t.conversation();
            let _ = t.messages();
            let _ = t.init_info();
            let _ = t.result();
        }
        std::fs::write(&path, bytes).unwrap();
        let _ = runner::prepare::resume::prepare_resume(&req, &Default::default());
    });
}
