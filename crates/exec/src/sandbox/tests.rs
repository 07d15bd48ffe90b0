//! The sandbox on this machine's kernel: real commands, confined as the Bash tool's are.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use std::sync::mpsc::{Receiver, channel};

use crate::cancel::Cancel;

use super::*;
use crate::process::ChildPolicy;
use crate::process::run::{End, ShellRun, run_shell};

/// A workdir, an outside directory and a home with credentials, in one temporary directory.
struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for d in [
            "work/.git/hooks",
            "outside",
            "home/.ssh",
            "home/.config/gh",
            "out",
        ] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("home/.ssh/id_rsa"), "PRIVATE KEY").unwrap();
        std::fs::write(root.join("home/.config/gh/hosts.yml"), "oauth_token: gho_x").unwrap();
        std::fs::write(root.join("home/notes.txt"), "public").unwrap();
        std::fs::write(root.join("work/a.txt"), "hello").unwrap();
        Fixture { _dir: dir, root }
    }

    fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn sandbox(&self, network: NetworkSetting) -> (Arc<Sandbox>, Receiver<NetworkAttempt>) {
        self.sandbox_with(network, vec![], vec![])
    }

    /// A sandbox with the spec's `unix_sockets` and `read` set.
    fn sandbox_with(
        &self,
        network: NetworkSetting,
        unix_sockets: Vec<PathBuf>,
        read: Vec<PathBuf>,
    ) -> (Arc<Sandbox>, Receiver<NetworkAttempt>) {
        self.sandbox_in(&self.p("work"), network, unix_sockets, read)
    }

    /// [`Fixture::sandbox_with`] for a task whose workdir is `workdir`.
    fn sandbox_in(
        &self,
        workdir: &Path,
        network: NetworkSetting,
        unix_sockets: Vec<PathBuf>,
        read: Vec<PathBuf>,
    ) -> (Arc<Sandbox>, Receiver<NetworkAttempt>) {
        let (tx, rx) = channel();
        let sb = Sandbox::start(SandboxRequest {
            mode: SandboxMode::Auto,
            network: &network,
            workdir,
            write: vec![],
            read_deny: vec![],
            unix_sockets,
            read,
            home: Some(self.p("home")),
            attempts: Arc::new(move |a| {
                let _ = tx.send(a);
            }),
        })
        .unwrap();
        (Arc::new(sb), rx)
    }

    /// Run `script` in the workdir, confined for `scope`: (exit code, stdout, stderr).
    fn run(&self, sb: &Arc<Sandbox>, scope: Scope, script: &str) -> (i32, String, String) {
        self.run_until(sb, scope, script, &Cancel::new())
    }

    /// [`Fixture::run`], stopped by `cancel`.
    fn run_until(
        &self,
        sb: &Arc<Sandbox>,
        scope: Scope,
        script: &str,
        cancel: &Cancel,
    ) -> (i32, String, String) {
        let policy = ChildPolicy {
            remove: vec![],
            sandbox: Some(sb.clone()),
            git_workspace: None,
        };
        let done = run_shell(ShellRun {
            script,
            cwd: &self.p("work"),
            env: &policy,
            extra_env: &[],
            timeout: Duration::from_secs(30),
            cancel,
            spill_dir: &self.p("out/spill"),
            spill_name: "t",
            scope,
            report: false,
            on_spawn: None,
        })
        .unwrap();
        assert!(cancel.is_cancelled() || matches!(done.end, End::Exited(_)));
        (
            done.exit_code.unwrap_or(-1),
            done.stdout.text,
            done.stderr.text,
        )
    }
}

fn confinable() -> bool {
    let ok = support().can_confine();
    if !ok {
        eprintln!("skipped: this kernel cannot confine (no Landlock or seccomp)");
    }
    ok
}

#[test]
fn writes_only_inside_the_writable_roots_and_only_when_allowed_to_write() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let outside = fx.p("outside/x");
    let (code, _, err) = fx.run(&sb, Scope::Write, &format!("touch '{}'", outside.display()));
    assert_ne!(code, 0);
    assert!(
        err.contains("Permission denied") || err.contains("Read-only file system"),
        "{err}"
    );
    assert!(!outside.exists());
    let (code, _, err) = fx.run(&sb, Scope::Write, "echo made > new.txt && cat new.txt");
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(fx.p("work/new.txt")).unwrap(),
        "made\n"
    );
    // The private TMPDIR is writable; /tmp itself is not.
    let (code, out, err) = fx.run(
        &sb,
        Scope::Write,
        "f=\"$TMPDIR/t\" && echo t > \"$f\" && cat \"$f\"",
    );
    assert_eq!((code, out.as_str()), (0, "t"), "{err}");
    // Allowed as read-only: no write anywhere, the workdir included.
    let (code, _, _) = fx.run(&sb, Scope::ReadOnly, "touch ro.txt");
    assert_ne!(code, 0);
    assert!(!fx.p("work/ro.txt").exists());
    let (code, out, _) = fx.run(&sb, Scope::ReadOnly, "cat a.txt");
    assert_eq!((code, out.as_str()), (0, "hello"));
}

#[test]
fn links_planted_in_the_workdir_do_not_lead_out() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let (code, _, _) = fx.run(
        &sb,
        Scope::Write,
        &format!(
            "ln -s '{}' esc && echo x > esc/planted",
            fx.p("outside").display()
        ),
    );
    assert_ne!(code, 0);
    assert!(!fx.p("outside/planted").exists());
    // A hard link to a file outside (which a write through it would change) cannot be made.
    let (_, out, _) = fx.run(
        &sb,
        Scope::Write,
        &format!(
            "ln '{}' hard 2>/dev/null && echo linked; echo x >> hard",
            fx.p("home/notes.txt").display()
        ),
    );
    assert!(!out.contains("linked"), "{out}");
    assert_eq!(
        std::fs::read_to_string(fx.p("home/notes.txt")).unwrap(),
        "public"
    );
}

#[test]
fn home_is_an_allow_list_of_toolchain_locations() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    // Credentials on no list: a token in git's url rewriting, a Postgres password file.
    std::fs::write(
        fx.p("home/.gitconfig"),
        "[url \"https://x-access-token:ghs_tok@github.com/\"]\n\tinsteadOf = https://github.com/\n",
    )
    .unwrap();
    std::fs::write(fx.p("home/.pgpass"), "*:*:*:ci:pgsecret").unwrap();
    std::fs::create_dir_all(fx.p("home/.cargo/bin")).unwrap();
    std::fs::write(fx.p("home/.cargo/env"), "toolchain").unwrap();
    std::fs::write(fx.p("home/.cargo/credentials.toml"), "token = \"cio_x\"").unwrap();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    assert!(sb.report().home_toolchains.contains(&".cargo".to_string()));
    for secret in [
        "home/.ssh/id_rsa",
        "home/.config/gh/hosts.yml",
        "home/.gitconfig",
        "home/.pgpass",
        "home/notes.txt",
        "home/.cargo/credentials.toml",
    ] {
        let (code, out, _) = fx.run(
            &sb,
            Scope::Write,
            &format!("cat '{}'", fx.p(secret).display()),
        );
        assert_ne!(code, 0, "{secret}");
        assert!(
            !out.contains("PRIVATE") && !out.contains("gho_") && !out.contains("ghs_tok"),
            "{out}"
        );
    }
    // Through a symlink in the workdir as well.
    let (code, out, _) = fx.run(
        &sb,
        Scope::Write,
        &format!("ln -s '{}' k && cat k/id_rsa", fx.p("home/.ssh").display()),
    );
    assert_ne!(code, 0);
    assert!(!out.contains("PRIVATE"));
    // A toolchain location is readable.
    let (code, out, _) = fx.run(
        &sb,
        Scope::ReadOnly,
        &format!("cat '{}'", fx.p("home/.cargo/env").display()),
    );
    assert_eq!((code, out.as_str()), (0, "toolchain"));
    // And what the spec's `sandbox.read` opens.
    let (opened, _rx) = fx.sandbox_with(NetworkSetting::None, vec![], vec![fx.p("home/notes.txt")]);
    let (code, out, _) = fx.run(
        &opened,
        Scope::ReadOnly,
        &format!("cat '{}'", fx.p("home/notes.txt").display()),
    );
    assert_eq!((code, out.as_str()), (0, "public"));
}

#[test]
fn no_network_means_no_tcp_and_no_udp() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let (code, _, err) = fx.run(
        &sb,
        Scope::Write,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"),
    );
    assert_ne!(code, 0);
    assert!(!err.contains("connected"));
    listener.set_nonblocking(true).unwrap();
    assert!(listener.accept().is_err(), "nothing connected");
    let (code, _, _) = fx.run(
        &sb,
        Scope::Write,
        "exec 3<>/dev/udp/127.0.0.1/53 && echo sent >&3",
    );
    assert_ne!(code, 0);
}

#[test]
fn the_parent_process_is_out_of_reach() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    // The shell's parent is this test process, or, in a PID namespace of its own (where its
    // parent is out of sight: pid 0), the namespace's init, a process outside the sandbox
    // holding a copy of this one's memory: its memory is out of reach. (A parent's
    // environment is readable through /proc for a process of the same user without the
    // sandbox; runner itself wipes its initial environment block, which an end-to-end test
    // checks.)
    const PARENT: &str = "p=$PPID; [ \"$p\" = 0 ] && p=1; ";
    let (code, _, _) = fx.run(
        &sb,
        Scope::Write,
        &format!("{PARENT}head -c 16 /proc/$p/mem >/dev/null"),
    );
    assert_ne!(code, 0);
    // Signals to processes outside the sandbox are refused (Landlock ABI 6).
    if support().landlock_scope() {
        let (code, _, _) = fx.run(&sb, Scope::Write, &format!("{PARENT}kill -0 $p"));
        assert_ne!(code, 0);
    }
}

#[test]
fn setuid_programs_do_not_lift_the_sandbox() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let (_, out, _) = fx.run(&sb, Scope::Write, "cat /proc/self/status | grep NoNewPrivs");
    assert!(out.contains("NoNewPrivs:\t1"), "{out}");
    let (code, _, _) = fx.run(&sb, Scope::Write, "sudo -n true");
    assert_ne!(code, 0);
}

/// A listener on 127.0.0.1 that answers one HTTP request with `body`.
fn one_shot_server(body: &'static str) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        if let Ok((mut s, _)) = listener.accept() {
            // The whole request head first: closing with unread bytes would send a reset,
            // and a reset can discard the response before the client reads it.
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let _ = write!(
                s,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.shutdown(std::net::Shutdown::Write);
            let _ = s.read(&mut buf);
        }
    });
    port
}

#[test]
fn the_egress_proxy_lets_listed_hosts_through_and_records_every_attempt() {
    if !confinable() || !support().landlock_net() {
        return;
    }
    let fx = Fixture::new();
    let port = one_shot_server("hello from upstream");
    let (sb, rx) = fx.sandbox(NetworkSetting::Hosts(vec!["localhost".into()]));
    // A client that speaks CONNECT through $HTTPS_PROXY, in bash alone.
    let connect = |host: &str| {
        format!(
            r#"p=${{HTTPS_PROXY##*:}}; exec 3<>/dev/tcp/127.0.0.1/$p || exit 9
printf 'CONNECT {host}:{port} HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n' >&3
IFS= read -r status <&3; echo "$status"
while IFS= read -r l <&3 && [ "$l" != $'\r' ]; do :; done
printf 'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n' >&3
cat <&3"#
        )
    };
    let (code, out, err) = fx.run(&sb, Scope::Write, &connect("localhost"));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.contains("hello from upstream"), "{out}");
    let (_, out, _) = fx.run(&sb, Scope::Write, &connect("example.com"));
    assert!(out.starts_with("HTTP/1.1 403"), "{out}");
    // Straight to the listener, past the proxy: refused by the kernel.
    let (code, _, _) = fx.run(
        &sb,
        Scope::Write,
        &format!("exec 3<>/dev/tcp/127.0.0.1/{port}"),
    );
    assert_ne!(code, 0);
    let mut seen = Vec::new();
    while let Ok(a) = rx.recv_timeout(Duration::from_secs(5)) {
        seen.push((a.host.clone(), a.allowed));
        if seen.len() == 2 {
            break;
        }
    }
    assert_eq!(
        seen,
        [
            ("localhost".to_string(), true),
            ("example.com".to_string(), false)
        ]
    );
}

/// With a host list, TCP goes through the proxy and Landlock holds it to the proxy's port;
/// other stream protocols, which Landlock's TCP rules do not see (MPTCP, SCTP), and raw or
/// packet sockets are refused outright. Probed with python3's socket module (errno 1: EPERM).
#[test]
fn only_plain_tcp_is_a_stream_socket_with_a_host_list() {
    if !confinable() || !support().landlock_net() || which("python3").is_none() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::Hosts(vec!["localhost".into()]));
    let probe = |args: &str| {
        format!(
            "python3 -c 'import socket, errno\ntry:\n    socket.socket({args}).close(); print(\"made\")\nexcept OSError as e:\n    print(errno.errorcode.get(e.errno))'"
        )
    };
    let cases = [
        // (socket arguments, expected): plain TCP is made (and held to the proxy by Landlock).
        ("socket.AF_INET, socket.SOCK_STREAM, 0", "made"),
        (
            "socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP",
            "made",
        ),
        ("socket.AF_INET, socket.SOCK_STREAM, 262", "EPERM"), // IPPROTO_MPTCP
        ("socket.AF_INET6, socket.SOCK_STREAM, 262", "EPERM"),
        ("socket.AF_INET, socket.SOCK_STREAM, 132", "EPERM"), // IPPROTO_SCTP
        ("socket.AF_INET, socket.SOCK_SEQPACKET, 132", "EPERM"),
        ("socket.AF_INET, socket.SOCK_DGRAM, 0", "EPERM"),
        (
            "socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP",
            "EPERM",
        ),
        ("socket.AF_PACKET, socket.SOCK_RAW, 0", "EPERM"),
    ];
    for (args, want) in cases {
        let (_, out, err) = fx.run(&sb, Scope::Write, &probe(args));
        assert_eq!(out.trim(), want, "socket({args}): {err}");
    }
}

/// A confined command acts on no process but its own: it cannot signal runner (here: the test
/// process), an ancestor, runner's group or every process, set their limits, priority or
/// scheduling, or push input into a terminal; and it runs in a session of its own, with no
/// controlling terminal. Run also with `RUNNER_TEST_LANDLOCK_ABI=4` (in `.ci/run`), where
/// Landlock cannot scope signals and seccomp alone holds.
#[test]
fn commands_cannot_act_on_other_processes() {
    if !confinable() || which("python3").is_none() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let runner = std::process::id();
    let grand = std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, r)| r.to_string()))
        .and_then(|r| r.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_default();
    let script = format!(
        r#"python3 - <<'EOF'
import errno, fcntl, os, resource, termios
def probe(name, f):
    try:
        f(); r = "done"
    except OSError as e:
        r = errno.errorcode.get(e.errno, str(e.errno))
    print(f"{{name}}={{r}}")
probe("kill_runner", lambda: os.kill({runner}, 0))
probe("kill_grandparent", lambda: os.kill({grand}, 0))
probe("kill_all", lambda: os.kill(-1, 0))
probe("prlimit_runner", lambda: resource.prlimit({runner}, resource.RLIMIT_FSIZE, (0, 0)))
probe("setpriority_runner", lambda: os.setpriority(os.PRIO_PROCESS, {runner}, 19))
probe("setpriority_user", lambda: os.setpriority(os.PRIO_USER, 0, 19))
probe("tiocsti", lambda: fcntl.ioctl(0, termios.TIOCSTI, b"x"))
probe("own_limit", lambda: resource.prlimit(0, resource.RLIMIT_CORE, (0, 0)))
probe("own_priority", lambda: os.setpriority(os.PRIO_PROCESS, 0, 19))
probe("controlling_terminal", lambda: open("/dev/tty"))
EOF"#
    );
    let (code, out, err) = fx.run(&sb, Scope::Write, &script);
    assert_eq!(code, 0, "{err}");
    for want in [
        "kill_runner=EPERM",
        "kill_grandparent=EPERM",
        "kill_all=EPERM",
        "prlimit_runner=EPERM",
        "setpriority_runner=EPERM",
        "setpriority_user=EPERM",
        "tiocsti=EPERM",
        "own_limit=done",
        "own_priority=done",
        "controlling_terminal=ENXIO",
    ] {
        assert!(out.lines().any(|l| l == want), "{want} not in:\n{out}{err}");
    }
}

fn which(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(program))
            .find(|p| p.is_file())
    })
}

#[test]
fn enforce_refuses_where_the_kernel_cannot_confine() {
    // What `prepare` and `Sandbox::start` check, on a simulated kernel without Landlock.
    let sup = Support {
        landlock_abi: None,
        seccomp: true,
        namespaces: None,
        unix_notify: false,
    };
    assert!(!sup.can_confine());
    let e = SandboxError::Unsupported(unsupported_reason(&sup));
    assert!(e.to_string().contains("no Landlock"), "{e}");
    let fx = Fixture::new();
    let off = Sandbox::off("sandbox.mode is off");
    assert!(!off.confines());
    assert!(off.confine(Scope::Write).unwrap().is_none());
    let _ = Path::new(&fx.root);
}

/// Spawns under load never clobber a descriptor: with runner holding ~200 files (and free
/// numbers around [`crate::process::REPORT_FD`], where a confined child's ruleset or report
/// pipe lands), many confined shells started at once each apply their confinement and get
/// their report pipe. Each must run and report; a single failure fails the test.
/// `RUNNER_SPAWN_STRESS` sets the number of spawns (default 2,000; `.ci/run` runs 10,000).
#[test]
fn confined_spawns_under_load_never_fail() {
    if !confinable() {
        return;
    }
    let total: usize = std::env::var("RUNNER_SPAWN_STRESS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let fx = Arc::new(Fixture::new());
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    // ~200 open files, with the numbers around REPORT_FD freed again so that new descriptors
    // (pipes, the ruleset's copy) keep landing there.
    let mut files: Vec<std::fs::File> = (0..200)
        .map(|_| std::fs::File::open(fx.p("work/a.txt")).unwrap())
        .collect();
    let near = (crate::process::REPORT_FD - 6)..=(crate::process::REPORT_FD + 6);
    files.retain(|f| !near.contains(&std::os::fd::AsRawFd::as_raw_fd(f)));
    let policy = Arc::new(ChildPolicy {
        remove: vec![],
        sandbox: Some(sb.clone()),
        git_workspace: None,
    });
    // 32 workers take the spawns in turn.
    let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let one = move |i: usize, fx: &Fixture, policy: &ChildPolicy| -> Result<(), String> {
        let script = format!("printf 'run {i}' >&{}", crate::process::REPORT_FD);
        let done = run_shell(ShellRun {
            script: &script,
            cwd: &fx.p("work"),
            env: policy,
            extra_env: &[],
            timeout: Duration::from_secs(60),
            cancel: &Cancel::new(),
            spill_dir: &fx.p("out/spill"),
            spill_name: &format!("s{i}"),
            scope: Scope::Write,
            report: true,
            on_spawn: None,
        });
        match done {
            Ok(d) if d.exit_code == Some(0) && d.report.as_deref() == Some(&format!("run {i}")) => {
                Ok(())
            }
            Ok(d) => Err(format!(
                "spawn {i}: exit {:?}, report {:?}, stderr {:?}",
                d.exit_code, d.report, d.stderr.text
            )),
            Err(e) => Err(format!("spawn {i}: {e}")),
        }
    };
    let workers: Vec<_> = (0..32)
        .map(|_| {
            let (fx, policy, next) = (fx.clone(), policy.clone(), next.clone());
            std::thread::spawn(move || {
                let mut failures = Vec::new();
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= total {
                        return failures;
                    }
                    if let Err(e) = one(i, &fx, &policy) {
                        failures.push(e);
                    }
                }
            })
        })
        .collect();
    let failures: Vec<String> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    drop(files);
    assert!(
        failures.is_empty(),
        "{} of {total} spawns failed; the first: {:?}",
        failures.len(),
        failures.iter().take(5).collect::<Vec<_>>()
    );
}

/// A python3 probe that connects a Unix stream socket to `path` (after `cd`-ing to `cwd`
/// when given) and prints `connected` or the errno's name.
fn unix_connect_probe(path: &str, cwd: Option<&str>) -> String {
    let cd = cwd.map(|c| format!("cd '{c}' && ")).unwrap_or_default();
    format!(
        "{cd}python3 -c \"import socket, errno\ntry:\n    s = socket.socket(socket.AF_UNIX); s.connect('{path}'); print('connected')\nexcept OSError as e:\n    print(errno.errorcode.get(e.errno))\""
    )
}

#[test]
fn unix_sockets_reach_only_the_writable_roots_and_the_listed_ones() {
    if !confinable() || which("python3").is_none() {
        return;
    }
    let fx = Fixture::new();
    // A daemon's socket outside the roots, as /var/run/docker.sock would be; one of the
    // task's own in the workdir; a link in the workdir to the daemon's.
    let daemon = fx.p("outside/docker.sock");
    let own = fx.p("work/own.sock");
    let _listeners = [&daemon, &own].map(|p| std::os::unix::net::UnixListener::bind(p).unwrap());
    std::fs::create_dir_all(fx.p("work/sub")).unwrap();
    std::os::unix::fs::symlink(&daemon, fx.p("work/link.sock")).unwrap();
    let sub = fx.p("work/sub");
    let sub = sub.to_str().unwrap();
    let cases: Vec<(String, &str)> = if support().unix_notify {
        vec![
            (unix_connect_probe(own.to_str().unwrap(), None), "connected"),
            (unix_connect_probe("../own.sock", Some(sub)), "connected"),
            (unix_connect_probe(daemon.to_str().unwrap(), None), "EACCES"),
            (
                unix_connect_probe("../../outside/docker.sock", Some(sub)),
                "EACCES",
            ),
            (unix_connect_probe("link.sock", None), "EACCES"),
            (
                unix_connect_probe("/proc/self/cwd/link.sock", None),
                "EACCES",
            ),
        ]
    } else {
        vec![(unix_connect_probe(own.to_str().unwrap(), None), "EPERM")]
    };
    for network in [NetworkSetting::None, NetworkSetting::Allow] {
        let (sb, _rx) = fx.sandbox(network.clone());
        for (probe, want) in &cases {
            let (code, out, err) = fx.run(&sb, Scope::Write, probe);
            assert_eq!(code, 0, "{err}");
            assert_eq!(out.trim(), *want, "{network:?}: {probe}: {err}");
        }
        // An unnamed stream pair is not a way out, and still works; a datagram socket (which
        // names its peer in every send) is refused, a pair of them too.
        let (code, out, err) = fx
            .run(
                &sb,
                Scope::Write,
                "python3 -c 'import socket\na, b = socket.socketpair(); a.send(b\"x\"); print(b.recv(1))\nfor f in (lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM), lambda: socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)):\n    try:\n        f(); print(\"made\")\n    except PermissionError:\n        print(\"refused\")'",
            );
        assert_eq!(code, 0, "{err}");
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            ["b'x'", "refused", "refused"],
            "{out}"
        );
    }
    // TCP connects go past the supervisor untouched.
    if support().unix_notify {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = tcp.local_addr().unwrap().port();
        let (sb, _rx) = fx.sandbox(NetworkSetting::Allow);
        let (code, out, err) = fx
            .run(
                &sb,
                Scope::Write,
                &format!("python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port})); print(\"connected\")'"),
            );
        assert_eq!(code, 0, "{err}");
        assert_eq!(out.trim(), "connected");
    }
    // Listed: reachable (and the report says which were listed).
    let (sb, _rx) = fx.sandbox_with(NetworkSetting::None, vec![daemon.clone()], vec![]);
    assert_eq!(sb.report().unix_sockets, vec![daemon.clone()]);
    let (code, out, err) = fx.run(
        &sb,
        Scope::Write,
        &unix_connect_probe(daemon.to_str().unwrap(), None),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "connected", "{err}");
}

#[test]
fn socket_variables_are_kept_only_for_listed_sockets() {
    let listed = vec![PathBuf::from("/run/user/1000/ssh-agent.sock")];
    assert!(names_listed_socket(
        "/run/user/1000/ssh-agent.sock",
        &listed
    ));
    assert!(names_listed_socket(
        "unix:///run/user/1000/ssh-agent.sock",
        &listed
    ));
    assert!(names_listed_socket(
        "unix:path=/run/user/1000/ssh-agent.sock,guid=1",
        &listed
    ));
    assert!(!names_listed_socket("/var/run/docker.sock", &listed));
    assert!(!names_listed_socket("tcp://127.0.0.1:2375", &listed));
    assert!(!names_listed_socket(
        "relative.sock",
        &[PathBuf::from("relative.sock")]
    ));
}

#[test]
fn other_processes_are_out_of_sight_and_leftovers_die_with_the_call() {
    if !confinable() || support().namespaces.is_none() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    assert!(sb.report().missing.is_empty(), "{:?}", sb.report());
    // The shell's parent (runner's child outside the namespace) and every other process are
    // out of sight: the command's own namespace has only its processes and its init.
    let (code, out, err) = fx
        .run(
            &sb,
            Scope::Write,
            "echo ppid=$PPID; ls /proc | grep -E '^[0-9]+$' | wc -l; cat /proc/1/environ >/dev/null 2>&1 && echo init-readable; true",
        );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("ppid=0"), "{out}");
    assert!(!out.contains("init-readable"), "{out}");
    let count: usize = out
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(usize::MAX);
    assert!(count <= 6, "{out}");
    // A double-forked daemon in a session of its own keeps writing after the call... unless
    // it dies with the call.
    let marker = fx.p("work/daemon.log");
    let (code, _, err) = fx
        .run(
            &sb,
            Scope::Write,
            "(setsid sh -c 'while true; do echo tick >> daemon.log; sleep 0.05; done' >/dev/null 2>&1 &) ; sleep 0.2",
        );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("[runner] this command left "), "{err}");
    let len = std::fs::metadata(&marker).map(|m| m.len()).unwrap_or(0);
    std::thread::sleep(Duration::from_millis(300));
    let later = std::fs::metadata(&marker).map(|m| m.len()).unwrap_or(0);
    assert_eq!(len, later, "the daemon outlived its call");
    // Exit codes and signals come through unchanged.
    let (code, _, _) = fx.run(&sb, Scope::Write, "exit 7");
    assert_eq!(code, 7);
    let (code, _, _) = fx.run(&sb, Scope::Write, "kill -9 $$");
    assert_eq!(code, 128 + 9);
}

#[test]
fn a_command_sees_no_process_of_another_task() {
    if !confinable() || support().namespaces.is_none() {
        return;
    }
    let (a, b) = (Fixture::new(), Fixture::new());
    let (sa, _ra) = a.sandbox(NetworkSetting::None);
    let (sb, _rb) = b.sandbox(NetworkSetting::None);
    // Task A's command runs `sleep 7.25` with a secret in its environment.
    let stop_a = Cancel::new();
    let stop = stop_a.clone();
    let a_run = std::thread::spawn(move || {
        a.run_until(
            &sa,
            Scope::Write,
            "export TASK_SECRET=s3cr3t; sleep 7.25",
            &stop,
        )
    });
    let cmdline_has = |text: &str| {
        std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
            std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                String::from_utf8_lossy(&c)
                    .replace('\0', " ")
                    .contains(text)
            })
        })
    };
    for _ in 0..100 {
        if cmdline_has("sleep 7.25") {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(cmdline_has("sleep 7.25"), "task A's command never started");
    // Task B's command looks for it through its /proc by cmdline and by environment (the
    // script names the pattern in pieces, so its own command line does not match).
    let (code, out, err) = b.run(
        &sb,
        Scope::Write,
        "p=7; p=\"sleep $p.25\"; s=s3; s=${s}cr3t; n=0; \
             for d in /proc/[0-9]*; do \
               tr '\\0' ' ' < $d/cmdline 2>/dev/null | grep -q \"$p\" && n=$((n+1)); \
               grep -qa \"$s\" $d/environ 2>/dev/null && n=$((n+1)); \
             done; echo found=$n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("found=0"), "{out}");
    stop_a.abandon();
    a_run.join().unwrap();
}

#[test]
fn the_namespace_init_retiring_its_mounts_is_not_taken_for_a_leftover() {
    if !confinable() || support().namespaces.is_none() {
        return;
    }
    // As runner is: the inits come back to this process when their waiter ends.
    crate::process::orphans::become_subreaper();
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    // The init of each command's namespaces ends after the command, retiring the mount
    // namespace; the call neither waits for it nor notes it as a process left running.
    for _ in 0..12 {
        let (code, _, err) = fx.run(&sb, Scope::ReadOnly, "true");
        assert_eq!(code, 0, "{err}");
        assert!(!err.contains("[runner] this command left"), "{err}");
    }
}

/// A confined program starts as the standard library would start it (with namespaces the
/// confinement itself `exec`s it): found on the command's own `PATH`, with its arguments and
/// its environment; one that cannot start fails the spawn with its error.
#[test]
fn a_confined_program_starts_as_the_standard_library_would_start_it() {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let bin = fx.p("work/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("runner-test-tool");
    std::fs::write(
        &tool,
        "#!/bin/sh\necho \"$0|$1|$2|$RUNNER_TEST_VAR|$CDPATH\"\n",
    )
    .unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    let policy = ChildPolicy {
        remove: vec![],
        sandbox: Some(sb.clone()),
        git_workspace: None,
    };
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env = [
        ("PATH".to_string(), path),
        ("RUNNER_TEST_VAR".to_string(), "v 1".to_string()),
        ("CDPATH".to_string(), "/set-then-kept".to_string()),
    ];
    let args = ["a b".to_string(), "c".to_string()];
    let spawn = |program: &'static str| {
        crate::process::spawn(&crate::process::Spawn {
            program: crate::process::Program::Exec {
                program,
                args: &args,
            },
            cwd: &fx.p("work"),
            env: &policy,
            inherit_env: true,
            extra_env: &env,
            stdin: false,
            scope: Scope::ReadOnly,
            report_fd: None,
        })
    };
    let mut child = spawn("runner-test-tool").unwrap();
    let mut out = String::new();
    let mut stdout = child.inner.stdout.take().unwrap();
    stdout.read_to_string(&mut out).unwrap();
    assert!(child.inner.wait().unwrap().success());
    // The kernel gives a script's interpreter the path `execvp` found.
    assert_eq!(
        out.trim(),
        format!("{}|a b|c|v 1|/set-then-kept", tool.display())
    );
    let err = match spawn("/nonexistent/runner-test-tool") {
        Err(e) => e,
        Ok(_) => panic!("a missing program started"),
    };
    assert_eq!(err.kind(), std::io::ErrorKind::NotFound, "{err}");
}

#[test]
fn metadata_outside_the_roots_cannot_change_and_root_has_no_capabilities() {
    if !confinable() || support().namespaces.is_none() {
        return;
    }
    let fx = Fixture::new();
    let key = fx.p("outside/key");
    std::fs::write(&key, "k").unwrap();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let before = std::fs::metadata(&key).unwrap();
    let (code, _, _) = fx.run(
        &sb,
        Scope::Write,
        &format!("chmod 0666 '{0}'; touch -d 2001-01-01 '{0}'", key.display()),
    );
    assert_ne!(code, 0);
    let after = std::fs::metadata(&key).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(before.mode(), after.mode());
    assert_eq!(before.mtime(), after.mtime());
    // Inside the workdir, metadata changes as ever.
    let (code, _, err) = fx.run(
        &sb,
        Scope::Write,
        "chmod 0600 a.txt && touch -d 2001-01-01 a.txt",
    );
    assert_eq!(code, 0, "{err}");
    // A command allowed as read-only changes no metadata, not even in the workdir.
    let written = std::fs::metadata(fx.p("work/a.txt")).unwrap();
    let (code, _, _) = fx.run(&sb, Scope::ReadOnly, "chmod 0644 a.txt; touch a.txt");
    assert_ne!(code, 0);
    let a = std::fs::metadata(fx.p("work/a.txt")).unwrap();
    assert_eq!(a.mode() & 0o777, 0o600);
    assert_eq!(a.mtime(), written.mtime());
    // The devices stay writable on their read-only mount, and their metadata does not change.
    for scope in [Scope::ReadOnly, Scope::Write] {
        let (_, out, err) = fx.run(
                &sb,
                scope,
                "echo x > /dev/null && echo wrote; head -c 4 /dev/zero | wc -c; touch /dev/null 2>/dev/null || echo refused",
            )
;
        assert_eq!(
            out.split_whitespace().collect::<Vec<_>>(),
            ["wrote", "4", "refused"],
            "{err}"
        );
    }
    let (code, out, err) = fx.run(
        &sb,
        Scope::Write,
        "grep -E '^Cap(Eff|Prm|Bnd|Amb)' /proc/self/status",
    );
    assert_eq!(code, 0, "{err}");
    for line in out.lines() {
        assert!(line.ends_with("0000000000000000"), "{out}");
    }
}

#[test]
fn what_the_kernel_cannot_give_is_named_and_enforce_refuses_it() {
    let full = Support {
        landlock_abi: Some(6),
        seccomp: true,
        namespaces: Some(NamespaceKind::User),
        unix_notify: true,
    };
    let hosts = NetworkSetting::Hosts(vec!["crates.io".into()]);
    assert!(Missing::of(&full, &hosts, true).is_empty());
    let bare = Support {
        landlock_abi: Some(3),
        namespaces: None,
        unix_notify: false,
        ..full
    };
    let names: Vec<&str> = Missing::of(&bare, &hosts, false)
        .into_iter()
        .map(Missing::as_str)
        .collect();
    assert_eq!(names, ["pid-namespace", "read-only-mounts", "tcp-ports"]);
    assert_eq!(Missing::of(&bare, &NetworkSetting::None, false).len(), 2);
    // Listed sockets on a kernel that cannot check their paths: every socket is reachable.
    assert_eq!(
        Missing::of(&bare, &NetworkSetting::None, true)
            .last()
            .map(|m| m.as_str()),
        Some("unix-socket-paths")
    );
    let e = SandboxError::Missing(names.join(", "));
    assert!(e.to_string().contains("enforce"), "{e}");
    assert!(e.to_string().contains("pid-namespace"), "{e}");
}

/// The rulesets are made at the task's first command, both scopes at once (a task that runs
/// no command makes none), and commands of either scope are confined by them.
#[test]
fn the_rulesets_are_made_at_the_first_command() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let (sb, _rx) = fx.sandbox(NetworkSetting::None);
    let made = |sb: &Sandbox| {
        let c = sb.compiled.as_ref().expect("a confining sandbox");
        let slots = c.rulesets.lock().unwrap_or_else(|e| e.into_inner());
        slots.iter().filter(|s| s.is_some()).count()
    };
    assert_eq!(made(&sb), 0, "none before a command");
    let (code, out, err) = fx.run(&sb, Scope::ReadOnly, "cat a.txt");
    assert_eq!((code, out.as_str()), (0, "hello"), "{err}");
    assert_eq!(made(&sb), 2, "both at the first command");
    let (code, _, _) = fx.run(&sb, Scope::ReadOnly, "touch ro.txt");
    assert_ne!(code, 0);
    let outside = fx.p("outside/x");
    let (code, _, _) = fx.run(&sb, Scope::Write, &format!("touch '{}'", outside.display()));
    assert_ne!(code, 0);
    assert!(!outside.exists() && !fx.p("work/ro.txt").exists());
}

/// A grant whose place a command may write (here a `sandbox.read` path inside a writable
/// root under the closed home directory): a command replaces it with a link to a credential
/// directory. Neither the ruleset made before nor the one made again after
/// [`landlock::SHARED_USES`] commands lets a command read through the link.
#[test]
fn a_grant_a_command_replaced_with_a_link_is_not_followed_when_the_ruleset_is_made_again() {
    if !confinable() {
        return;
    }
    let fx = Fixture::new();
    let proj = fx.p("home/proj");
    std::fs::create_dir_all(proj.join("sub")).unwrap();
    std::fs::write(proj.join("sub/notes.txt"), "mine").unwrap();
    let (sb, _rx) = fx.sandbox_in(&proj, NetworkSetting::None, vec![], vec![proj.join("sub")]);
    let read_key = format!("cat '{}'", proj.join("sub/id_rsa").display());
    let (code, out, _) = fx.run(
        &sb,
        Scope::ReadOnly,
        &format!("cat '{}'", proj.join("sub/notes.txt").display()),
    );
    assert_eq!((code, out.as_str()), (0, "mine"));
    let (code, _, err) = fx.run(
        &sb,
        Scope::Write,
        &format!(
            "rm -rf '{0}' && ln -s '{1}' '{0}'",
            proj.join("sub").display(),
            fx.p("home/.ssh").display()
        ),
    );
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = fx.run(&sb, Scope::ReadOnly, &read_key);
    assert_ne!(code, 0, "read through the link: {out}");
    for _ in 0..=landlock::SHARED_USES {
        fx.run(&sb, Scope::ReadOnly, "true");
    }
    let (code, out, _) = fx.run(&sb, Scope::ReadOnly, &read_key);
    assert_ne!(
        code, 0,
        "read through the link after the ruleset was made again: {out}"
    );
}
