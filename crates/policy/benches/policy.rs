//! The permission engine alone (a `harness = false` bench; `cargo bench -p runner-policy`):
//! `Policy::decide` for typical and adversarial Bash commands and for a file read. Each figure
//! is the median per-call time over several samples.

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
use std::path::PathBuf;
use std::time::Duration;

use common::{Table, fmt_dur, time_per_iter};
use runner_policy::roots::SessionRoots;
use runner_policy::{Access, PermissionMode, Policy, ToolCall};

const SAMPLES: usize = 7;
const TARGET: Duration = Duration::from_millis(200);

fn main() {
    println!(
        "runner-policy: median of {SAMPLES} samples of ~{} ms each\n",
        TARGET.as_millis()
    );
    bench_permissions();
    bench_options();
}

/// `args::risks`: each call's options read against its program's table (prefixes, clusters,
/// attached values) and mapped onto risks.
fn bench_options() {
    use runner_policy::args::risks;
    use runner_policy::word::ArgWord;
    let long_curl = format!(
        "curl -fsSL {} -o out.json https://example.com/x",
        "-H x:y ".repeat(200)
    );
    let cases: Vec<(&str, String)> = vec![
        (
            "sort -u -o out.txt in.txt",
            "sort -u -o out.txt in.txt".into(),
        ),
        (
            "git clone --u=x (prefix)",
            "git clone --depth 1 --u=x https://example.com/x dir".into(),
        ),
        (
            "tar xCf DIR FILE (old style)",
            "tar xCf .git/hooks h.tar".into(),
        ),
        ("make -kE (cluster)", "make -kj4 test -E x CC=y".into()),
        ("curl with 200 headers", long_curl),
    ];
    let mut t = Table::new(&[
        "options read by args::risks",
        "words",
        "risks",
        "median / call",
    ]);
    for (label, cmd) in &cases {
        let argv: Vec<ArgWord> = cmd.split_whitespace().map(ArgWord::literal).collect();
        let n = risks(&argv).len();
        let (d, _) = time_per_iter(SAMPLES, TARGET / 2, || {
            black_box(risks(black_box(&argv)));
        });
        t.row(vec![
            label.to_string(),
            argv.len().to_string(),
            n.to_string(),
            fmt_dur(d),
        ]);
    }
    println!("{}", t.render());
}

fn bench_permissions() {
    let work = PathBuf::from("/work/repo");
    let roots = SessionRoots {
        spec_dir: work.clone(),
        repo_root: Some(work.clone()),
        workdir: work.clone(),
        additional_dirs: vec![],
        output_dir: PathBuf::from("/work/.runner/task"),
        source_root: None,
    };
    let allow: Vec<String> = [
        "Read",
        "Edit",
        "Bash(cargo test:*)",
        "Bash(cargo build *)",
        "Bash(git diff *)",
        "Bash(npm run lint)",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let deny: Vec<String> = ["Bash(rm -rf *)", "Bash(curl *)", "Read(./secrets/**)"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let policy = Policy::new(PermissionMode::Default, &allow, &deny)
        .expect("policy")
        .with_home(Some(PathBuf::from("/root")));

    let long_chain = (0..200)
        .map(|i| format!("echo step{i}"))
        .collect::<Vec<_>>()
        .join(" && ");
    let long_pipe = (0..200).map(|_| "cat").collect::<Vec<_>>().join(" | ");
    let nested = {
        let mut s = "echo x".to_string();
        for _ in 0..30 {
            s = format!("echo $({s})");
        }
        s
    };
    let quotes = format!(
        "echo '{}' \"{}\"",
        "a'\\''b ".repeat(500),
        "$HOME \\\" ".repeat(500)
    );
    let big_arg = format!("grep -rn '{}' src", "x".repeat(100_000));
    let heredoc = format!(
        "cat <<'EOF'\n{}EOF",
        "line of text $(not expanded)\n".repeat(1000)
    );
    let unterminated = format!("echo \"{}", "abc ".repeat(1000));
    let cases: Vec<(&str, String)> = vec![
        ("typical: git status (read-only set)", "git status".into()),
        ("typical: ls -la src | head", "ls -la src | head -20".into()),
        (
            "typical: cargo test (allow rule)",
            "cargo test --all -- --nocapture".into(),
        ),
        (
            "typical: git diff && cargo build",
            "git diff HEAD~1 && cargo build --release".into(),
        ),
        ("typical: rm -rf (deny rule)", "rm -rf target".into()),
        (
            "typical: unknown command (no rule)",
            "python3 setup.py install".into(),
        ),
        ("adversarial: 200-command && chain", long_chain),
        ("adversarial: 200-stage pipeline", long_pipe),
        ("adversarial: 30 nested $(...)", nested),
        ("adversarial: 1,000 quoted pieces", quotes),
        ("adversarial: 100 KB argument", big_arg),
        ("adversarial: 1,000-line heredoc", heredoc),
        ("adversarial: unterminated quote", unterminated),
        (
            "adversarial: env/sudo wrappers",
            "env -i FOO=1 nice -n 5 timeout 10 sudo rm -rf /".into(),
        ),
        (
            "v3: sh -c script (POSIX check)",
            "sh -c 'ls -la && grep -rn \"$x\" src | head -5'".into(),
        ),
        (
            "v3: ln then cat (changed paths)",
            "ln -s ../home h && cat h/.netrc".into(),
        ),
        (
            "v3: gh api -X PUT (deny equivalents)",
            "gh api -X PUT repos/o/r/pulls/1/merge".into(),
        ),
        (
            "v3: bash -o pipefail -c (shell options)",
            "bash -o pipefail -c 'cargo test 2>&1 | tail -n 20'".into(),
        ),
        (
            "v3: git show HEAD (Read deny in repo)",
            "git show HEAD".into(),
        ),
    ];
    let mut t = Table::new(&[
        "Bash permission decision",
        "bytes",
        "decision",
        "median / call",
    ]);
    let cwd = work.clone();
    for (label, cmd) in &cases {
        let access = Access::Exec(cmd.to_string());
        let call = ToolCall {
            tool: "Bash",
            access: &access,
            cwd: &cwd,
        };
        let decision = policy.decide(&call, &roots);
        let (d, _) = time_per_iter(SAMPLES, TARGET / 2, || {
            black_box(policy.decide(black_box(&call), &roots));
        });
        t.row(vec![
            label.to_string(),
            cmd.len().to_string(),
            if decision.is_allow() { "allow" } else { "deny" }.into(),
            fmt_dur(d),
        ]);
    }
    let read_access = Access::Read(vec!["/work/repo/src/main.rs".into()]);
    let call = ToolCall {
        tool: "Read",
        access: &read_access,
        cwd: &cwd,
    };
    let (d, _) = time_per_iter(SAMPLES, TARGET / 2, || {
        black_box(policy.decide(black_box(&call), &roots));
    });
    t.row(vec![
        "Read src/main.rs".into(),
        "".into(),
        "allow".into(),
        fmt_dur(d),
    ]);
    println!("{}", t.render());
}
