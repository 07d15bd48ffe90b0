//! Macro benchmarks: the release `runner` binary against the test suite's mock Anthropic
//! server (runner-test-support), plus the Grep/Glob tools against `rg` on a big generated tree.
//!
//! `cargo bench --bench macro -- [session|parallel|grep|filerules|batch|sandbox|gitcost|ratelimit|otel|all]`
//! (default: all; `gitcost` is the batch's git cost per task alone; `filerules` is Grep and
//! Glob with and without the sandbox's file rules; `ratelimit` is 1,000 tasks against a
//! token-bucket rate limit, with the rate-limit governor on and off, and runs only when named;
//! `otel` is the session with OpenTelemetry export off, on to a local OTLP receiver, and on to
//! a collector that refuses connections, runs interleaved, and runs only when named).
//!
//! Environment:
//! - `BENCH_RUNS` (default 5): runs per measurement (medians are reported);
//! - `BENCH_BATCH_RUNS` (default 3) and `BENCH_BATCH_J1_RUNS` (default 1): runs of the batch
//!   at --jobs 8/32 and at --jobs 1 (which takes ≥ 50 s per run);
//! - `BENCH_LATENCY_MS` (default 100): model latency for the batch;
//! - `BENCH_BATCH_JOBS` (default `1,8,32`): the --jobs values of the batch;
//! - `BENCH_REPO_FILES` (default 3000): files in the batch's generated repository (shaped like
//!   a real project's, see `macro/tree.rs`), whose tasks run in git worktrees and, for
//!   comparison, in place (`git: {isolate: false}`);
//! - `BENCH_REPO` (unset): a repository to copy (`git clone --local`) instead of generating
//!   one, e.g. a checkout of a real project;
//! - `BENCH_REPO_DIR` (default: the system temp directory): where that repository goes;
//! - `BENCH_BATCH_TASKS` (default 100): tasks in the batch;
//! - `BENCH_BATCH_VARIANTS` (default both): `worktrees`, `in place` or both;
//! - `BENCH_WORKTREES` (default unset = `auto`): `RUNNER_WORKTREES` for the batch's runner
//!   (`checkout`: the pool's fallback; `own`: no pool, a checkout per task);
//! - `BENCH_GIT_COST=0`: skip the per-task git cost measured through the library;
//! - `BENCH_OUT_DIR` (default: the system temp directory): where the batch's transcript
//!   directories, and so its worktrees, go (e.g. `/dev/shm` to take the disk out);
//! - `BENCH_TREE` (default /tmp/runner-bench-tree) and `BENCH_FILES` (default 100000): the
//!   generated tree for Grep/Glob (reused when it already has the right file count).
//!
//! `cargo bench` builds the bench profile (= release), and `CARGO_BIN_EXE_runner` is that
//! build of the binary.

// Test and benchmark code may unwrap, panic and print (the library may not: Cargo.toml [lints]).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

#[path = "macro/batch.rs"]
mod batch;
#[path = "common/mod.rs"]
mod common;
#[path = "macro/ratelimit.rs"]
mod ratelimit;
#[path = "macro/tree.rs"]
mod tree;
/// The tests' mock servers and temporary repositories (runner-test-support), and the bench
/// build of the binary with their clean environment.
mod support {
    pub use runner_test_support::*;

    /// The `runner` binary `cargo bench` built, with [`runner_command`]'s clean environment.
    pub fn runner_std_cmd() -> std::process::Command {
        runner_command(env!("CARGO_BIN_EXE_runner"))
    }
}

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use common::{Table, fmt_dur, median, median_f64};
use support::{MockAnthropic, MockTurn, Resp, text_turn};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let which: String = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "all".into());
    let runs = env_usize("BENCH_RUNS", 5).max(1);
    println!(
        "runner macro-benchmarks ({which}); binary {}",
        runner_bin().display()
    );
    println!("load average at start: {}\n", load_average());
    let all = which == "all";
    if all || which == "session" {
        bench_session(runs);
    }
    if all || which == "parallel" {
        bench_parallel(runs);
    }
    if all || which == "grep" {
        bench_grep(runs);
    }
    if all || which == "filerules" {
        bench_file_rules(runs);
    }
    if all || which == "batch" {
        batch::bench_batch();
    }
    if which == "gitcost" {
        batch::bench_git_cost();
    }
    if which == "ratelimit" {
        ratelimit::bench_rate_limit();
    }
    if which == "otel" {
        bench_otel(runs);
    }
    if all || which == "sandbox" {
        bench_sandbox(runs);
    }
    println!("load average at end: {}", load_average());
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "?".into())
}

fn runner_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_runner"))
}

/// The runner command with the test harness's clean environment, pointed at `mock`.
fn runner(mock: &MockAnthropic) -> Command {
    let mut cmd = support::runner_std_cmd();
    // BENCH_WRAP="valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p" profiles runner.
    if let Ok(wrap) = std::env::var("BENCH_WRAP") {
        let mut words = wrap.split_whitespace();
        if let Some(prog) = words.next() {
            let mut w = Command::new(prog);
            w.args(words).arg(cmd.get_program()).args(cmd.get_args());
            for (k, v) in cmd.get_envs() {
                match v {
                    Some(v) => w.env(k, v),
                    None => w.env_remove(k),
                };
            }
            w.stdin(Stdio::null());
            cmd = w;
        }
    }
    cmd.env("ANTHROPIC_BASE_URL", mock.url())
        .env("RUNNER_STREAM_IDLE_TIMEOUT_MS", "30000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// The same command wrapped in `/usr/bin/time -v`.
fn timed(cmd: &Command) -> Command {
    let mut t = Command::new("/usr/bin/time");
    t.arg("-v").arg(cmd.get_program()).args(cmd.get_args());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => t.env(k, v),
            None => t.env_remove(k),
        };
    }
    if let Some(d) = cmd.get_current_dir() {
        t.current_dir(d);
    }
    t.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    t
}

fn max_rss_kb(time_stderr: &str) -> Option<u64> {
    time_stderr
        .lines()
        .find(|l| l.contains("Maximum resident set size"))
        .and_then(|l| l.rsplit(':').next())
        .and_then(|v| v.trim().parse().ok())
}

/// A small repository to run tools in.
fn sample_repo() -> support::TestRepo {
    let repo = support::TestRepo::new();
    for i in 0..20 {
        let body: String = (0..60)
            .map(|l| format!("pub fn item_{i}_{l}(x: u32) -> u32 {{ x + {l} }} // TODO check\n"))
            .collect();
        repo.write(&format!("src/mod_{i}.rs"), &body);
    }
    repo.commit_all("sources");
    repo
}

// ---------------------------------------------------------------- (5) sandbox

/// The 20-turn session shape with a Bash command per turn (`wc -l` of a source file, `ls`,
/// `grep -c`: read-only, so each runs confined read-only), run with the default sandbox and
/// with `--sandbox off`, alternating, so both see the same machine load.
fn bench_sandbox(runs: usize) {
    let repo = sample_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let spec = support::write_spec(
        &root,
        "name: bench-sandbox\nprompt: survey the sources\nmodel: claude-sonnet-4-5\ntools: [Bash]\npermissions:\n  mode: dontAsk\nlimits:\n  max_turns: 50\n",
    );
    let script = || {
        let mut s: Vec<MockTurn> = (0..SESSION_TURNS)
            .map(|i| {
                let cmd = match i % 3 {
                    0 => format!("wc -l src/mod_{}.rs", i % 20),
                    1 => "ls src".to_string(),
                    _ => format!("grep -c item_{}_1 src/mod_{}.rs", i % 20, i % 20),
                };
                Resp::new()
                    .tool_use(&format!("toolu_b{i:03}"), "Bash", json!({"command": cmd}))
                    .usage(1000 + 100 * i as u64, 40)
                    .turn()
            })
            .collect();
        s.push(text_turn("done"));
        s
    };
    let mut walls: [Vec<Duration>; 2] = [Vec::new(), Vec::new()];
    for run in 0..runs * 2 {
        let confined = run % 2 == 0;
        let mock = MockAnthropic::start(script());
        let out_dir = tempfile::tempdir().unwrap();
        let mut cmd = runner(&mock);
        cmd.current_dir(&root)
            .arg("exec")
            .arg(&spec)
            .arg("--transcript-dir")
            .arg(out_dir.path());
        if !confined {
            cmd.args(["--sandbox", "off"]);
        }
        let spawned = Instant::now();
        let out = cmd.output().expect("spawn runner");
        let wall = spawned.elapsed();
        assert!(
            out.status.success(),
            "runner failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        mock.assert_clean();
        for r in mock.requests().iter().skip(1) {
            let text = r.body.to_string();
            assert!(!text.contains("Permission denied"), "a command was denied");
        }
        walls[usize::from(!confined)].push(wall);
    }
    let (on, off) = (median(&walls[0]), median(&walls[1]));
    let mut t = Table::new(&["20 Bash turns, zero latency", "median wall", "target"]);
    t.row(vec![
        "sandbox (default)".into(),
        fmt_dur(on),
        "≤ 1.05 × unconfined".into(),
    ]);
    t.row(vec!["--sandbox off".into(), fmt_dur(off), String::new()]);
    t.row(vec![
        "ratio".into(),
        format!("{:.3}", on.as_secs_f64() / off.as_secs_f64()),
        String::new(),
    ]);
    println!("{}", t.render());
}

// ---------------------------------------------------------------- (1) 20-turn session

const SESSION_TURNS: usize = 20;

/// Tool call `i` of the scripted session: Read, Glob and Grep in turn, all read-only.
fn session_call(i: usize, root: &Path) -> (&'static str, serde_json::Value) {
    match i % 3 {
        0 => (
            "Read",
            json!({"file_path": root.join(format!("src/mod_{}.rs", i % 20))}),
        ),
        1 => ("Glob", json!({"pattern": "src/**/*.rs"})),
        _ => (
            "Grep",
            json!({"pattern": format!("item_{}_1", i % 20), "output_mode": "content", "-n": true}),
        ),
    }
}

fn session_script(root: &Path) -> Vec<MockTurn> {
    let mut script: Vec<MockTurn> = (0..SESSION_TURNS)
        .map(|i| {
            let (name, input) = session_call(i, root);
            Resp::new()
                .text(&format!("Step {i}: let me look."))
                .tool_use(&format!("toolu_s{i:03}"), name, input)
                .usage(1000 + 100 * i as u64, 40)
                .turn()
        })
        .collect();
    script.push(text_turn("All done: nothing to fix."));
    script
}

fn session_spec(dir: &Path) -> PathBuf {
    support::write_spec(
        dir,
        "name: bench-session\nprompt: survey the sources\nmodel: claude-sonnet-4-5\ntools: [Read, Glob, Grep]\npermissions:\n  mode: dontAsk\nlimits:\n  max_turns: 50\n",
    )
}

/// Median time of the session's tool calls run directly through the library, summed.
fn session_tool_time(repo: &Path) -> Duration {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = tool_ctx(repo);
    let mut total = Duration::ZERO;
    for i in 0..SESSION_TURNS {
        let (name, input) = session_call(i, repo);
        let tool = runner::tools::builtin::make(name).unwrap();
        let mut times = Vec::new();
        for _ in 0..15 {
            let t = Instant::now();
            let out = rt
                .block_on(tool.parse(&input, &ctx).unwrap().run(&ctx))
                .unwrap();
            times.push(t.elapsed());
            assert!(!out.is_error, "{name} {input}: {}", out.content);
        }
        total += median(&times);
    }
    total
}

fn tool_ctx(root: &Path) -> runner::tools::ToolContext {
    let root = std::fs::canonicalize(root).unwrap();
    let out = std::env::temp_dir().join(format!("runner-bench-out-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let roots = runner::roots::SessionRoots {
        spec_dir: root.clone(),
        repo_root: Some(root.clone()),
        workdir: root,
        additional_dirs: vec![],
        output_dir: out,
        source_root: None,
    };
    runner::tools::ToolContext::new(
        Arc::new(roots),
        runner::process::ChildPolicy::default(),
        tokio_util::sync::CancellationToken::new(),
    )
}

fn bench_session(runs: usize) {
    let repo = sample_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let spec = session_spec(&root);
    let tool_time = session_tool_time(&root);
    let mut walls = Vec::new();
    let mut startups = Vec::new();
    let mut per_turn_gap = Vec::new();
    let mut per_turn_wall = Vec::new();
    let mut rss = Vec::new();
    for run in 0..runs * 2 {
        // Even runs: plain (wall, start-up, gaps). Odd runs: under /usr/bin/time -v (RSS).
        let with_time = run % 2 == 1;
        let mock = MockAnthropic::start(session_script(&root));
        let out_dir = tempfile::tempdir().unwrap();
        let mut cmd = runner(&mock);
        cmd.current_dir(repo.path())
            .arg("exec")
            .arg(&spec)
            .arg("--transcript-dir")
            .arg(out_dir.path());
        let mut cmd = if with_time { timed(&cmd) } else { cmd };
        let spawned = Instant::now();
        let out = cmd.output().expect("spawn runner");
        let wall = spawned.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "runner failed: {stderr}");
        mock.assert_clean();
        let reqs = mock.requests();
        assert_eq!(reqs.len(), SESSION_TURNS + 1);
        if with_time {
            rss.push(max_rss_kb(&stderr).expect("time -v output") as f64 / 1024.0);
            continue;
        }
        walls.push(wall);
        startups.push(reqs[0].received_at - spawned);
        // Request-to-request gaps: the mock answers at once, so each gap is runner's work
        // for one turn (parse, assemble, transcript, tool, next request) plus the mock's.
        let span = reqs[SESSION_TURNS].received_at - reqs[0].received_at;
        per_turn_gap.push(span.saturating_sub(tool_time) / SESSION_TURNS as u32);
        per_turn_wall.push(wall.saturating_sub(tool_time) / (SESSION_TURNS as u32 + 1));
    }
    let mut t = Table::new(&["20-tool-turn session, zero latency", "median", "target"]);
    t.row(vec![
        "wall time (spawn → exit)".into(),
        fmt_dur(median(&walls)),
        "≤ 0.2 s (10× under Claude Code's 2.0 s)".into(),
    ]);
    t.row(vec![
        "start-up (spawn → first request at the mock)".into(),
        fmt_dur(median(&startups)),
        "≤ 10 ms".into(),
    ]);
    t.row(vec![
        "per-turn overhead (request gaps − tool time) / 20".into(),
        fmt_dur(median(&per_turn_gap)),
        "≤ 1 ms".into(),
    ]);
    t.row(vec![
        "per-turn overhead (wall − tool time) / 21 requests".into(),
        fmt_dur(median(&per_turn_wall)),
        "".into(),
    ]);
    t.row(vec![
        "tool time (20 calls via the library, summed medians)".into(),
        fmt_dur(tool_time),
        "".into(),
    ]);
    t.row(vec![
        "peak RSS (/usr/bin/time -v)".into(),
        format!("{:.1} MB", median_f64(&rss)),
        "≤ 30 MB (and ≤ 25.5 MB = 10× under 255 MB)".into(),
    ]);
    println!("{}", t.render());
    println!(
        "runs: {runs} plain + {runs} under /usr/bin/time; walls {:?}\n",
        walls.iter().map(|d| fmt_dur(*d)).collect::<Vec<_>>()
    );
}

/// The session of [`bench_session`] with OpenTelemetry export off (no `OTEL_*` variable), on
/// (to an OTLP/HTTP receiver on 127.0.0.1) and on to a port nothing listens on, interleaved so
/// the machine's load falls on all three alike.
fn bench_otel(runs: usize) {
    let repo = sample_repo();
    let root = std::fs::canonicalize(repo.path()).unwrap();
    let spec = session_spec(&root);
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", l.local_addr().unwrap())
    };
    let cases = ["off", "on (local receiver)", "on (collector refusing)"];
    let mut walls: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let mut gaps: Vec<Vec<Duration>> = vec![Vec::new(); cases.len()];
    let mut rss: Vec<Vec<f64>> = vec![Vec::new(); cases.len()];
    let receiver = support::otlp::OtlpReceiver::start();
    for run in 0..runs * 2 {
        let with_time = run % 2 == 1;
        for (c, walls) in walls.iter_mut().enumerate() {
            let mock = MockAnthropic::start(session_script(&root));
            let out_dir = tempfile::tempdir().unwrap();
            let mut cmd = runner(&mock);
            cmd.current_dir(repo.path())
                .arg("exec")
                .arg(&spec)
                .arg("--transcript-dir")
                .arg(out_dir.path());
            match c {
                1 => cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint()),
                2 => cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", &closed),
                _ => &mut cmd,
            };
            let mut cmd = if with_time { timed(&cmd) } else { cmd };
            let spawned = Instant::now();
            let out = cmd.output().expect("spawn runner");
            let wall = spawned.elapsed();
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "runner failed: {stderr}");
            let reqs = mock.requests();
            assert_eq!(reqs.len(), SESSION_TURNS + 1);
            if with_time {
                rss[c].push(max_rss_kb(&stderr).expect("time -v output") as f64 / 1024.0);
                continue;
            }
            walls.push(wall);
            let span = reqs[SESSION_TURNS].received_at - reqs[0].received_at;
            gaps[c].push(span / SESSION_TURNS as u32);
        }
    }
    assert!(
        !receiver.spans().is_empty(),
        "the receiver got the exported spans"
    );
    let mut t = Table::new(&[
        "20-tool-turn session, OpenTelemetry",
        "wall (spawn → exit)",
        "per turn (request gaps / 20)",
        "peak RSS",
    ]);
    for (c, name) in cases.iter().enumerate() {
        t.row(vec![
            (*name).into(),
            fmt_dur(median(&walls[c])),
            fmt_dur(median(&gaps[c])),
            format!("{:.1} MB", median_f64(&rss[c])),
        ]);
    }
    println!("{}", t.render());
    for (c, name) in cases.iter().enumerate() {
        println!(
            "{name}: walls {:?}",
            walls[c].iter().map(|d| fmt_dur(*d)).collect::<Vec<_>>()
        );
    }
    println!();
}

// ---------------------------------------------------------------- (2) 10 × 100 ms in one turn

fn bench_parallel(runs: usize) {
    let repo = sample_repo();
    let spec = support::write_spec(
        repo.path(),
        "name: bench-parallel\nprompt: wait\nmodel: claude-sonnet-4-5\ntools: [Bash]\npermissions:\n  mode: dontAsk\n",
    );
    let mut phases = Vec::new();
    for _ in 0..runs {
        let mut r = Resp::new();
        for k in 0..10 {
            r = r.tool_use(
                &format!("toolu_p{k}"),
                "Bash",
                json!({"command": "sleep 0.1", "description": "wait 100 ms"}),
            );
        }
        let mock = MockAnthropic::start(vec![r.turn(), text_turn("done")]);
        let out_dir = tempfile::tempdir().unwrap();
        let out = runner(&mock)
            .current_dir(repo.path())
            .arg("exec")
            .arg(&spec)
            .arg("--transcript-dir")
            .arg(out_dir.path())
            .output()
            .expect("spawn runner");
        assert!(
            out.status.success(),
            "runner failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        mock.assert_clean();
        let reqs = mock.requests();
        for k in 0..10 {
            let text = reqs[1]
                .tool_result_text(&format!("toolu_p{k}"))
                .unwrap_or_default();
            assert!(!text.contains("denied"), "call {k} was denied: {text}");
        }
        phases.push(reqs[1].received_at - reqs[0].received_at);
    }
    let m = median(&phases);
    let mut t = Table::new(&["10 × Bash `sleep 0.1` in one turn", "median", "target"]);
    t.row(vec![
        "request 1 → request 2 (the tool phase)".into(),
        fmt_dur(m),
        "≈ 100 ms if concurrent (1 s if serial)".into(),
    ]);
    t.row(vec![
        "ratio to one call (100 ms)".into(),
        format!("{:.2}×", m.as_secs_f64() / 0.1),
        "≈ 1×".into(),
    ]);
    println!("{}", t.render());
    println!(
        "`sleep` is in the read-only command set, so with no allow rule the 10 calls are one concurrent batch.\n"
    );
}

// ---------------------------------------------------------------- (3) Grep vs rg, Glob

fn tree_root() -> PathBuf {
    PathBuf::from(std::env::var("BENCH_TREE").unwrap_or_else(|_| "/tmp/runner-bench-tree".into()))
}

/// Generate `files` source-like files under `root` (reused if the marker says it matches).
fn ensure_tree(root: &Path, files: usize) {
    let marker = root.join(".bench-tree");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(&files.to_string()) {
        return;
    }
    let t = Instant::now();
    let _ = std::fs::remove_dir_all(root);
    let per_dir = 100;
    for i in 0..files {
        let dir = root.join(format!(
            "d{:03}/s{:02}",
            i / (per_dir * 10),
            (i / per_dir) % 10
        ));
        if i % per_dir == 0 {
            std::fs::create_dir_all(&dir).unwrap();
        }
        let ext = ["rs", "py", "txt", "md"][i % 4];
        let mut body = String::with_capacity(1200);
        for l in 0..24 {
            body.push_str(&format!(
                "fn item_{i}_{l}(value: u32) -> u32 {{ value * {l} + {i} }}\n"
            ));
        }
        if i % 1000 == 7 {
            body.push_str("// NEEDLE_7f3a marks a rare line\n");
        }
        std::fs::write(dir.join(format!("f{i:06}.{ext}")), body).unwrap();
    }
    std::fs::write(&marker, files.to_string()).unwrap();
    println!(
        "generated {files} files under {} in {}",
        root.display(),
        fmt_dur(t.elapsed())
    );
}

fn time_runs<T>(runs: usize, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut times = Vec::new();
    let mut last = None;
    for _ in 0..runs {
        let t = Instant::now();
        let v = f();
        times.push(t.elapsed());
        last = Some(v);
    }
    (median(&times), last.unwrap())
}

fn bench_grep(runs: usize) {
    let files = env_usize("BENCH_FILES", 100_000);
    let root = tree_root();
    ensure_tree(&root, files);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let ctx = tool_ctx(&root);
    let grep = runner::tools::builtin::make("Grep").unwrap();
    let glob = runner::tools::builtin::make("Glob").unwrap();
    let rg = |args: &[&str]| {
        let out = Command::new("rg")
            .args(args)
            .arg(&root)
            .stdin(Stdio::null())
            .output()
            .expect("rg (apt-get install -y ripgrep)");
        out.stdout.len()
    };
    // Warm the page cache once.
    rg(&["-l", "NEEDLE_7f3a"]);

    struct Case {
        label: &'static str,
        input: serde_json::Value,
        rg_args: Vec<&'static str>,
    }
    let cases = [
        Case {
            label: "rare literal, files_with_matches (100 files)",
            input: json!({"pattern": "NEEDLE_7f3a", "path": root}),
            rg_args: vec!["-l", "NEEDLE_7f3a"],
        },
        Case {
            label: "regex, content -n (≈1.1k lines)",
            input: json!({"pattern": r"item_\d+7_2[0-3]\(", "path": root, "output_mode": "content", "-n": true, "head_limit": 0}),
            rg_args: vec!["-n", r"item_\d+7_2[0-3]\("],
        },
        Case {
            label: "no match, count",
            input: json!({"pattern": "ZZZ_absent_[0-9]+", "path": root, "output_mode": "count"}),
            rg_args: vec!["-c", "ZZZ_absent_[0-9]+"],
        },
    ];
    let mut t = Table::new(&["tree of files", "Grep tool", "rg 13", "Grep / rg", "target"]);
    for c in &cases {
        let (g, out) = time_runs(runs, || {
            rt.block_on(grep.parse(&c.input, &ctx).unwrap().run(&ctx))
                .unwrap()
        });
        assert!(!out.is_error, "{}: {}", c.label, out.content);
        let (r, _) = time_runs(runs, || rg(&c.rg_args));
        t.row(vec![
            format!("{} ({files} files)", c.label),
            fmt_dur(g),
            fmt_dur(r),
            format!("{:.2}×", g.as_secs_f64() / r.as_secs_f64()),
            "≤ 1.3×".into(),
        ]);
    }
    println!("{}", t.render());

    let mut t = Table::new(&["Glob on the tree", "median", "matches", "target"]);
    for pattern in ["**/*.rs", "d04*/s0[0-4]/f*7.py", "**/nothing-*.zig"] {
        let input = json!({"pattern": pattern, "path": root});
        let (d, out) = time_runs(runs, || {
            rt.block_on(glob.parse(&input, &ctx).unwrap().run(&ctx))
                .unwrap()
        });
        assert!(!out.is_error, "{pattern}: {}", out.content);
        let n = out
            .structured
            .as_ref()
            .and_then(|s| s.get("totalMatches"))
            .and_then(serde_json::Value::as_u64)
            .unwrap_or(0);
        t.row(vec![
            format!("`{pattern}`"),
            fmt_dur(d),
            n.to_string(),
            "well under 1 s".into(),
        ]);
    }
    println!("{}", t.render());
}

/// Grep and Glob on the tree with and without the sandbox's file rules (`mode: off`, so no
/// kernel is needed; the same query as a confining sandbox): one `read_deny` directory inside
/// the tree, so every entry of the walk is checked against it.
fn bench_file_rules(runs: usize) {
    use runner::sandbox::settings::{NetworkSetting, SandboxMode};
    use runner::sandbox::{Sandbox, SandboxRequest};
    let files = env_usize("BENCH_FILES", 100_000);
    let root = tree_root();
    ensure_tree(&root, files);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let plain = &tool_ctx(&root);
    let grep = runner::tools::builtin::make("Grep").unwrap();
    let glob = runner::tools::builtin::make("Glob").unwrap();
    let root = std::fs::canonicalize(&root).unwrap();
    let sandbox = Sandbox::start(SandboxRequest {
        mode: SandboxMode::Off,
        network: &NetworkSetting::None,
        workdir: &root,
        write: vec![],
        read_deny: vec![root.join("d000")],
        unix_sockets: vec![],
        read: vec![],
        home: std::env::var_os("HOME").map(std::path::PathBuf::from),
        attempts: Arc::new(|_| {}),
    })
    .unwrap();
    let ruled = runner::tools::ToolContext::new(
        plain.session.roots.clone(),
        runner::process::ChildPolicy {
            sandbox: Some(Arc::new(sandbox)),
            ..runner::process::ChildPolicy::default()
        },
        tokio_util::sync::CancellationToken::new(),
    );
    let mut t = Table::new(&[
        "file rules on the tree",
        "no rules",
        "rules",
        "rules / none",
    ]);
    let cases = [
        (
            "Grep rare literal, files_with_matches",
            grep.as_ref(),
            json!({"pattern": "NEEDLE_7f3a", "path": root}),
        ),
        (
            "Glob `**/*.rs`",
            glob.as_ref(),
            json!({"pattern": "**/*.rs", "path": root}),
        ),
    ];
    for (label, tool, input) in cases {
        let time = |ctx: &runner::tools::ToolContext| {
            time_runs(runs, || {
                rt.block_on(tool.parse(&input, ctx).unwrap().run(ctx))
                    .unwrap()
            })
        };
        let (a, out_a) = time(plain);
        let (b, out_b) = time(&ruled);
        assert!(!out_a.is_error && !out_b.is_error, "{label}");
        assert!(
            out_b.content.len() <= out_a.content.len(),
            "{label}: the rules hid nothing"
        );
        t.row(vec![
            label.to_string(),
            fmt_dur(a),
            fmt_dur(b),
            format!("{:.2}×", b.as_secs_f64() / a.as_secs_f64()),
        ]);
    }
    println!("{}", t.render());
}
