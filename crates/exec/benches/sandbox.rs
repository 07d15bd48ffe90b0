//! How runner starts and confines a command, alone (a `harness = false` bench;
//! `cargo bench -p runner-exec`): one `true` started, run and reaped through the process
//! module, unconfined and in the sandbox (the difference is what confinement costs per
//! command), and the sandbox's per-task set-up.

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
use std::sync::Arc;
use std::time::Duration;

use common::{Table, fmt_dur, time_per_iter};

const SAMPLES: usize = 7;
const TARGET: Duration = Duration::from_millis(200);

fn main() {
    println!(
        "runner-exec: median of {SAMPLES} samples of ~{} ms each\n",
        TARGET.as_millis()
    );
    bench_sandbox();
}

/// One `true` through the process module, as the Bash tool runs it, without and with the
/// task's sandbox (read-only and write scopes): the difference is the confinement's cost.
fn bench_sandbox() {
    use runner_exec::process::ChildPolicy;
    use runner_exec::process::run::{ShellRun, run_shell};
    use runner_exec::sandbox::settings::{NetworkSetting, SandboxMode};
    use runner_exec::sandbox::{Sandbox, SandboxRequest};
    use runner_protocol::Scope;

    // As runner is (its main): the orphans of commands, a namespace's init among them, come
    // back to this process and are swept at each call's end.
    runner_exec::process::orphans::become_subreaper();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path().canonicalize().unwrap();
    let spill = work.join("spill");
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let started = std::time::Instant::now();
    let sandbox = rt
        .block_on(Sandbox::start(SandboxRequest {
            mode: SandboxMode::Auto,
            network: &NetworkSetting::None,
            workdir: &work,
            write: vec![],
            read_deny: vec![],
            unix_sockets: vec![],
            read: vec![],
            home: std::env::var_os("HOME").map(PathBuf::from),
            attempts: tx,
        }))
        .unwrap();
    let setup = started.elapsed();
    let confined = sandbox.confines();
    let sandbox = Arc::new(sandbox);
    let cancel = tokio_util::sync::CancellationToken::new();
    let one = |policy: &ChildPolicy, scope: Scope| {
        rt.block_on(async {
            let done = run_shell(ShellRun {
                script: "true",
                cwd: &work,
                env: policy,
                extra_env: &[],
                timeout: Duration::from_secs(10),
                cancel: &cancel,
                spill_dir: &spill,
                spill_name: "b",
                scope,
                report: true,
                on_spawn: None,
            })
            .await
            .unwrap();
            assert_eq!(done.exit_code, Some(0));
        })
    };
    let plain = ChildPolicy::default();
    let boxed = ChildPolicy {
        sandbox: Some(sandbox.clone()),
        ..ChildPolicy::default()
    };
    let mut t = Table::new(&[
        "command `true` (spawn, wait, reap)",
        "median",
        "CPU (runner + its processes)",
    ]);
    let (d0, _) = time_per_iter(SAMPLES, TARGET, || one(&plain, Scope::Write));
    let c0 = cpu_per_iter(|| one(&plain, Scope::Write));
    t.row(vec!["unconfined".into(), fmt_dur(d0), fmt_dur(c0)]);
    let (d1, _) = time_per_iter(SAMPLES, TARGET, || one(&boxed, Scope::ReadOnly));
    let c1 = cpu_per_iter(|| one(&boxed, Scope::ReadOnly));
    t.row(vec![
        "sandbox, read-only scope".into(),
        fmt_dur(d1),
        fmt_dur(c1),
    ]);
    let (d2, _) = time_per_iter(SAMPLES, TARGET, || one(&boxed, Scope::Write));
    let c2 = cpu_per_iter(|| one(&boxed, Scope::Write));
    t.row(vec![
        "sandbox, write scope".into(),
        fmt_dur(d2),
        fmt_dur(c2),
    ]);
    let (dc, _) = time_per_iter(SAMPLES, TARGET, || {
        black_box(sandbox.confine(Scope::Write).unwrap());
    });
    let cc = cpu_per_iter(|| {
        black_box(sandbox.confine(Scope::Write).unwrap());
    });
    t.row(vec![
        "runner's side of confining one command (ruleset, env)".into(),
        fmt_dur(dc),
        fmt_dur(cc),
    ]);
    for row in bench_connect(&rt, &work, &spill, &cancel, &plain, &boxed) {
        t.row(row);
    }
    print!("{}", t.render());
    println!(
        "sandbox confines: {confined}; per-task setup (grants, rulesets, filter): {}; Unix socket paths checked: {}\n",
        fmt_dur(setup),
        runner_exec::sandbox::support().unix_notify
    );
}

/// One Unix socket `connect` in the workdir, unconfined and checked by runner's supervisor
/// (where the kernel has user notifications): the table rows, per call.
fn bench_connect(
    rt: &tokio::runtime::Runtime,
    work: &std::path::Path,
    spill: &std::path::Path,
    cancel: &tokio_util::sync::CancellationToken,
    plain: &runner_exec::process::ChildPolicy,
    boxed: &runner_exec::process::ChildPolicy,
) -> Vec<Vec<String>> {
    use runner_exec::process::ChildPolicy;
    use runner_exec::process::run::{ShellRun, run_shell};
    use runner_protocol::Scope;

    let mut rows = Vec::new();
    // A python3 loop of CONNECTS calls less the same loop of none, per call.
    const CONNECTS: u32 = 2000;
    let server = work.join("bench.sock");
    let listener = std::os::unix::net::UnixListener::bind(&server).unwrap();
    // Accepted as they come: a full backlog would block the next connect.
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            drop(conn);
        }
    });
    let script = |n: u32| {
        format!(
            "python3 -c \"import socket\nfor _ in range({n}):\n    s = socket.socket(socket.AF_UNIX); s.connect('{}'); s.close()\"",
            server.display()
        )
    };
    let timed = |policy: &ChildPolicy, script: &str| {
        let started = std::time::Instant::now();
        rt.block_on(async {
            let done = run_shell(ShellRun {
                script,
                cwd: work,
                env: policy,
                extra_env: &[],
                timeout: Duration::from_secs(60),
                cancel,
                spill_dir: spill,
                spill_name: "b",
                scope: Scope::Write,
                report: true,
                on_spawn: None,
            })
            .await
            .unwrap();
            assert_eq!(done.exit_code, Some(0), "{}", done.stderr.text);
        });
        started.elapsed()
    };
    let per_connect = |policy: &ChildPolicy| {
        let mut samples: Vec<Duration> = (0..3)
            .map(|_| {
                timed(policy, &script(CONNECTS)).saturating_sub(timed(policy, &script(0)))
                    / CONNECTS
            })
            .collect();
        samples.sort();
        samples[1]
    };
    if std::path::Path::new("/usr/bin/python3").exists() {
        rows.push(vec![
            "Unix socket connect, unconfined (per call)".into(),
            fmt_dur(per_connect(plain)),
            String::new(),
        ]);
        if runner_exec::sandbox::support().unix_notify {
            rows.push(vec![
                "Unix socket connect, sandbox (per call)".into(),
                fmt_dur(per_connect(boxed)),
                String::new(),
            ]);
        }
    }
    rows
}

/// CPU time (user + system) per call of `f`, of this process and of the processes it started
/// and reaped: on a shared machine the wall time grows with the load, the CPU time much less.
fn cpu_per_iter(mut f: impl FnMut()) -> Duration {
    const N: u32 = 100;
    let used = || {
        let mut total = Duration::ZERO;
        for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
            // SAFETY: an all-zero rusage is valid; getrusage fills it.
            let mut r: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: getrusage writes one rusage.
            unsafe { libc::getrusage(who, &mut r) };
            for tv in [r.ru_utime, r.ru_stime] {
                total += Duration::new(tv.tv_sec as u64, tv.tv_usec as u32 * 1000);
            }
        }
        total
    };
    let before = used();
    for _ in 0..N {
        f();
    }
    (used() - before) / N
}
