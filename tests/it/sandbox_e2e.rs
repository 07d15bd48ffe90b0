//! The sandbox through the real binary: a scripted model runs commands that try to write
//! outside the workdir, read credentials and runner's own environment, reach the network,
//! and escape through the repository's git configuration; the tests check none of it works and
//! that the reports say how commands were confined.

use std::path::Path;

use crate::support::*;
use serde_json::{Value, json};

const GITHUB_TOKEN: &str = "ghs_sandboxtestsecretvalue1234";
const DECLARED: &str = "declared-secret-value-5678";

fn spec(extra: &str) -> String {
    format!(
        "name: sbx\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\nsecrets: [DECLARED_SECRET]\n{extra}"
    )
}

/// Whether this kernel can confine (the tests that need it say so and pass trivially where it
/// cannot; CI's kernel can).
fn confinable() -> bool {
    let ok = runner::sandbox::support().can_confine();
    if !ok {
        eprintln!("skipped: this kernel cannot confine commands");
    }
    ok
}

/// A home directory with an SSH key and a GitHub CLI token in it.
fn home_with_credentials(out: &OutDir) -> std::path::PathBuf {
    let home = out.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".config/gh")).unwrap();
    std::fs::write(
        home.join(".ssh/id_rsa"),
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    )
    .unwrap();
    std::fs::write(
        home.join(".config/gh/hosts.yml"),
        "oauth_token: gho_hoststoken",
    )
    .unwrap();
    home
}

fn run_one_command(
    mock: &MockAnthropic,
    repo: &TestRepo,
    out: &OutDir,
    yaml: &str,
    extra_args: &[&str],
) -> Run {
    let spec = write_spec(repo.path(), yaml);
    let home = home_with_credentials(out);
    exec(mock, repo, out)
        .json()
        .junit(out.junit())
        .args(extra_args)
        .arg(&spec)
        .env("HOME", &home)
        .env("GITHUB_TOKEN", GITHUB_TOKEN)
        .env("DECLARED_SECRET", DECLARED)
        .run()
}

/// Run `bash probe.sh` (the repository's) as the task's one command in bypassPermissions
/// mode, with `extra_yaml` added to the spec; the mock answers the tool result with "done".
fn run_probe(
    repo: &TestRepo,
    out: &OutDir,
    extra_yaml: &str,
    extra_args: &[&str],
) -> (MockAnthropic, Run) {
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "bash probe.sh"})),
        text_turn("done"),
    ]);
    let yaml = spec(&format!(
        "permissions:\n  mode: bypassPermissions\n{extra_yaml}"
    ));
    let run = run_one_command(&mock, repo, out, &yaml, extra_args);
    (mock, run)
}

fn assert_no_secret(text: &str) {
    for secret in [GITHUB_TOKEN, DECLARED, "OPENSSH PRIVATE", "gho_hoststoken"] {
        assert!(!text.contains(secret), "{secret} leaked: {text}");
    }
}

#[test]
fn commands_cannot_write_outside_read_credentials_or_runners_environment() {
    if !confinable() {
        return;
    }
    let repo = TestRepo::new();
    let out = OutDir::new();
    let outside = out.path().join("outside.txt");
    // A script the policy cannot look into (as `cargo test` runs build scripts): only the
    // sandbox stands between it and the machine.
    repo.write(
        "probe.sh",
        &format!(
            "touch {o}\necho wrote-inside > inside.txt\ncat ~/.ssh/id_rsa\ncat ~/.config/gh/hosts.yml\n\
             tr '\\0' '\\n' < /proc/$PPID/environ | grep -E 'TOKEN|SECRET|KEY'\n\
             sudo -n true && echo sudo-ok\nexit 1\n",
            o = outside.display()
        ),
    );
    let (mock, run) = run_probe(&repo, &out, "", &[]);
    run.expect_code(0);
    assert!(!outside.exists(), "wrote outside the workdir");
    assert_eq!(repo.read("inside.txt"), "wrote-inside\n");
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert_no_secret(&text);
    assert!(!text.contains("sudo-ok"), "{text}");
    assert!(text.contains("Permission denied"), "{text}");
    // The model is told why, in one line.
    assert!(
        text.contains("[sandbox] writes are allowed only under"),
        "{text}"
    );
    assert!(text.contains("network is off"), "{text}");
    // The reports say how commands were confined.
    let result = run.result();
    let sandbox = &result["runner_sandbox"];
    assert_eq!(sandbox["confined"], json!(true), "{result}");
    assert_eq!(sandbox["mode"], json!("auto"));
    assert_eq!(sandbox["network"], json!("none"));
    let init = &read_json_lines(Path::new(
        result["runner_transcript_path"].as_str().unwrap(),
    ))[0];
    assert_eq!(init["sandbox"]["confined"], json!(true), "{init}");
    let junit = std::fs::read_to_string(out.junit()).unwrap();
    assert!(
        junit.contains(r#"name="sandbox.confined" value="true""#),
        "{junit}"
    );
    mock.assert_clean();
}

#[test]
fn runners_own_environment_shows_no_secret_even_unsandboxed() {
    let repo = TestRepo::new();
    let out = OutDir::new();
    repo.write(
        "probe.sh",
        "tr '\\0' '\\n' < /proc/$PPID/environ\necho end\n",
    );
    let (mock, run) = run_probe(&repo, &out, "", &["--sandbox", "off"]);
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(text.contains("end"), "{text}");
    assert_no_secret(&text);
    assert!(!text.contains("mock-key"), "{text}");
    assert_eq!(run.result()["runner_sandbox"]["confined"], json!(false));
    mock.assert_clean();
}

#[test]
fn no_network_means_a_local_listener_is_never_reached() {
    if !confinable() {
        return;
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let repo = TestRepo::new();
    let out = OutDir::new();
    repo.write(
        "probe.sh",
        &format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected\n"),
    );
    let (mock, run) = run_probe(&repo, &out, "", &[]);
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(!text.contains("connected"), "{text}");
    assert!(listener.accept().is_err(), "the listener was reached");
    mock.assert_clean();
}

/// A one-request HTTP server on 127.0.0.1.
fn upstream(body: &'static str) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        if let Ok((mut s, _)) = listener.accept() {
            // Read the whole request head first: closing a socket with unread input resets the
            // connection, and the reset discards the response still in the send queue.
            let mut head = Vec::new();
            let mut buf = [0u8; 4096];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(response.as_bytes());
            let _ = s.shutdown(std::net::Shutdown::Write);
        }
    });
    port
}

#[test]
fn listed_hosts_go_through_the_proxy_and_every_attempt_is_recorded() {
    if !confinable() || !runner::sandbox::support().landlock_net() {
        return;
    }
    let port = upstream("through the proxy");
    let repo = TestRepo::new();
    let out = OutDir::new();
    // A CONNECT through $HTTPS_PROXY in plain bash, to an allowed and a refused host.
    let connect = |host: &str| {
        format!(
            "exec 3<>/dev/tcp/127.0.0.1/${{HTTPS_PROXY##*:}}\nprintf 'CONNECT {host}:{port} HTTP/1.1\\r\\n\\r\\n' >&3\n\
             IFS= read -r s <&3; echo \"{host}: $s\"\n\
             while IFS= read -r l <&3 && [ \"$l\" != $'\\r' ]; do :; done\n\
             printf 'GET / HTTP/1.1\\r\\nHost: {host}\\r\\n\\r\\n' >&3; cat <&3; exec 3>&-\n"
        )
    };
    repo.write(
        "probe.sh",
        &format!("{}echo\n{}", connect("localhost"), connect("example.com")),
    );
    let (mock, run) = run_probe(&repo, &out, "sandbox:\n  network: [localhost]\n", &[]);
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(text.contains("localhost: HTTP/1.1 200"), "{text}");
    assert!(text.contains("through the proxy"), "{text}");
    assert!(text.contains("example.com: HTTP/1.1 403"), "{text}");
    let result = run.result();
    assert_eq!(
        result["runner_network"],
        json!({"allowed": 1, "denied": 1}),
        "{result}"
    );
    let records = read_json_lines(Path::new(
        result["runner_transcript_path"].as_str().unwrap(),
    ));
    // One record per attempt. An allowed attempt is recorded when its tunnel closes, so the
    // two may come in either order.
    let mut network: Vec<(String, Value)> = records
        .iter()
        .filter(|r| r["subtype"] == "runner_network")
        .map(|r| {
            (
                r["host"].as_str().unwrap_or("").to_string(),
                r["allowed"].clone(),
            )
        })
        .collect();
    network.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        network,
        [
            ("example.com".to_string(), json!(false)),
            ("localhost".to_string(), json!(true)),
        ]
    );
    let junit = std::fs::read_to_string(out.junit()).unwrap();
    assert!(
        junit.contains(r#"name="network.denied" value="1""#),
        "{junit}"
    );
    mock.assert_clean();
}

#[test]
fn a_read_only_command_writes_nothing_even_through_planted_git_config() {
    if !confinable() {
        return;
    }
    let repo = TestRepo::new();
    // A pull request can plant configuration that `git status` runs.
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(repo.path())
            .status()
            .unwrap()
    };
    git(&[
        "config",
        "core.fsmonitor",
        "touch pwned-by-fsmonitor; false",
    ]);
    let out = OutDir::new();
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "git status --short"})),
        text_turn("done"),
    ]);
    let run = run_one_command(&mock, &repo, &out, &spec(""), &[]);
    run.expect_code(0);
    assert!(
        !repo.exists("pwned-by-fsmonitor"),
        "the planted program wrote in the workdir"
    );
    mock.assert_clean();
}

#[test]
fn a_rule_allowed_command_writes_in_the_workdir() {
    if !confinable() {
        return;
    }
    let repo = TestRepo::new();
    let out = OutDir::new();
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "t1",
            "Bash",
            json!({"command": "mkdir -p build && touch build/out.o"}),
        ),
        text_turn("done"),
    ]);
    let run = run_one_command(
        &mock,
        &repo,
        &out,
        &spec("permissions:\n  allow: [\"Bash(mkdir:*)\", \"Bash(touch:*)\"]\n"),
        &[],
    );
    run.expect_code(0);
    assert!(repo.exists("build/out.o"));
    mock.assert_clean();
}

#[test]
fn enforce_on_a_kernel_without_landlock_exits_2_before_any_request() {
    let repo = TestRepo::new();
    let out = OutDir::new();
    let mock = MockAnthropic::start(vec![text_turn("never")]);
    let spec_path = write_spec(repo.path(), &spec("sandbox:\n  mode: enforce\n"));
    let run = exec(&mock, &repo, &out)
        .arg(&spec_path)
        .env("RUNNER_TEST_LANDLOCK_ABI", "0")
        .run();
    run.expect_code(2);
    assert!(
        run.stderr.contains("sandbox.mode is enforce"),
        "{}",
        run.stderr
    );
    assert_eq!(mock.served(), 0);
    // `auto` on the same kernel runs, unconfined, and says so.
    let spec_path = write_spec(repo.path(), &spec(""));
    let run = exec(&mock, &repo, &out)
        .json()
        .arg(&spec_path)
        .env("RUNNER_TEST_LANDLOCK_ABI", "0")
        .run();
    run.expect_code(0);
    assert!(run.stderr.contains("UNCONFINED"), "{}", run.stderr);
    let sandbox = &run.result()["runner_sandbox"];
    assert_eq!(sandbox["confined"], json!(false));
    assert!(
        sandbox["unconfined_because"]
            .as_str()
            .is_some_and(|s| s.contains("no Landlock")),
        "{sandbox}"
    );
    mock.assert_clean();
}

/// Whether commands get PID and mount namespaces of their own here (as root, or through user
/// namespaces).
fn namespaces() -> bool {
    let ok = confinable() && runner::sandbox::support().namespaces.is_some();
    if !ok {
        eprintln!("skipped: commands get no namespaces of their own on this machine");
    }
    ok
}

#[test]
fn no_other_process_is_in_sight_even_an_ancestor_holding_the_secrets() {
    if !namespaces() {
        return;
    }
    let repo = TestRepo::new();
    let out = OutDir::new();
    // Every process's environment, as root could read it: runner's wrapper shell still holds
    // the declared secret. The probe says only whether it found it (the value itself would be
    // redacted from the result anyway).
    repo.write(
        "probe.sh",
        "n=$(ls /proc | grep -cE '^[0-9]+$')\necho \"processes=$n\"\n\
         grep -l 'declared-secret-value' /proc/[0-9]*/environ 2>/dev/null && echo LEAKED\n\
         grep -l 'ghs_sandboxtest' /proc/[0-9]*/environ 2>/dev/null && echo LEAKED\n\
         grep -o 'CapEff:.*' /proc/self/status\necho end\n",
    );
    let mock = MockAnthropic::start(vec![
        tool_turn("t1", "Bash", json!({"command": "bash probe.sh"})),
        text_turn("done"),
    ]);
    let spec_path = write_spec(
        repo.path(),
        &spec("permissions:\n  mode: bypassPermissions\n"),
    );
    let home = home_with_credentials(&out);
    let run = exec(&mock, &repo, &out)
        .json()
        .arg(&spec_path)
        .env("HOME", &home)
        .env("GITHUB_TOKEN", GITHUB_TOKEN)
        .env("DECLARED_SECRET", DECLARED)
        .under_shell()
        .run();
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(text.contains("end"), "{text}");
    assert!(!text.contains("LEAKED"), "{text}");
    assert!(text.contains("CapEff:\t0000000000000000"), "{text}");
    let n: usize = text
        .lines()
        .find_map(|l| l.strip_prefix("processes="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    assert!(n <= 8, "{text}");
    assert!(run.result()["runner_sandbox"]["namespaces"].is_string());
    mock.assert_clean();
}

#[test]
fn a_daemon_a_command_leaves_behind_dies_with_its_call() {
    if !namespaces() {
        return;
    }
    let repo = TestRepo::new();
    let out = OutDir::new();
    // A double fork into a session of its own, still writing after the command returned.
    repo.write(
        "probe.sh",
        "(setsid sh -c 'sleep 1; echo late > late.txt' >/dev/null 2>&1 &)\necho started\n",
    );
    let (mock, run) = run_probe(&repo, &out, "", &[]);
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    assert!(text.contains("started"), "{text}");
    assert!(text.contains("[runner] this command left "), "{text}");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(!repo.exists("late.txt"), "the daemon outlived its call");
    mock.assert_clean();
}

#[test]
fn without_namespaces_runner_still_stops_what_a_command_leaves_behind() {
    let repo = TestRepo::new();
    let out = OutDir::new();
    repo.write(
        "probe.sh",
        "(setsid sh -c 'sleep 1; echo late > late.txt' >/dev/null 2>&1 &)\necho started\n",
    );
    let spec_path = write_spec(
        repo.path(),
        &spec("permissions:\n  mode: bypassPermissions\n"),
    );
    // As on a kernel that gives commands no namespaces (and with no sandbox at all).
    for extra in [&[][..], &["--sandbox", "off"][..]] {
        let mock = MockAnthropic::start(vec![
            tool_turn("t1", "Bash", json!({"command": "bash probe.sh"})),
            text_turn("done"),
        ]);
        let run = exec(&mock, &repo, &out)
            .json()
            .args(extra)
            .arg(&spec_path)
            .env("RUNNER_TEST_NO_NAMESPACES", "1")
            .run();
        run.expect_code(0);
        // Stopped at the call's end (and said so in its result), or — when the double fork
        // reached runner only after that — when the run ends: never left running.
        let text = mock.request(1).tool_result_text("t1").unwrap();
        assert!(text.contains("started"), "{text}");
        std::thread::sleep(std::time::Duration::from_millis(1500));
        assert!(!repo.exists("late.txt"), "the daemon outlived its call");
        mock.assert_clean();
    }
}

/// A probe that serves a Unix socket in the workdir and connects to it, by absolute and (from
/// a subdirectory) relative path, then to the daemon's socket (argument 1) directly and
/// through a link planted in the workdir; one line per attempt: `connected` or the errno.
const UNIX_PROBE: &str = r#"import os, socket, errno, sys
daemon = sys.argv[1]
def connect(path):
    try:
        socket.socket(socket.AF_UNIX).connect(path)
        return "connected"
    except OSError as e:
        return errno.errorcode.get(e.errno)
server = socket.socket(socket.AF_UNIX)
server.bind("own.sock")
server.listen(8)
os.makedirs("sub", exist_ok=True)
os.symlink(daemon, "link.sock")
print("own", connect(os.path.abspath("own.sock")))
os.chdir("sub")
print("relative", connect("../own.sock"))
print("daemon", connect(daemon))
print("link", connect("../link.sock"))
print("agent=" + os.environ.get("SSH_AUTH_SOCK", "none"))
"#;

#[test]
fn unix_sockets_reach_the_workdir_and_the_listed_ones_only() {
    if !confinable() || which_python().is_none() {
        return;
    }
    let out = OutDir::new();
    // A daemon's socket outside the roots, as /var/run/docker.sock or $SSH_AUTH_SOCK would be.
    let sock = out.path().join("docker.sock");
    let listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let supervised = runner::sandbox::support().unix_notify;
    for (extra, listed) in [
        (String::new(), false),
        (
            format!(
                "sandbox:\n  unix_sockets: [{:?}]\n",
                sock.display().to_string()
            ),
            true,
        ),
    ] {
        let repo = TestRepo::new();
        repo.write("probe.py", UNIX_PROBE);
        let mock = MockAnthropic::start(vec![
            tool_turn(
                "t1",
                "Bash",
                json!({"command": format!("python3 probe.py {}", sock.display())}),
            ),
            text_turn("done"),
        ]);
        let spec_path = write_spec(
            repo.path(),
            &spec(&format!("permissions:\n  mode: bypassPermissions\n{extra}")),
        );
        let run = exec(&mock, &repo, &out)
            .json()
            .arg(&spec_path)
            .env("SSH_AUTH_SOCK", &sock)
            .run();
        run.expect_code(0);
        let text = mock.request(1).tool_result_text("t1").unwrap();
        let outside = if listed { "connected" } else { "EACCES" };
        let expected: Vec<String> = if supervised {
            vec![
                "own connected".into(),
                "relative connected".into(),
                format!("daemon {outside}"),
                format!("link {outside}"),
            ]
        } else if listed {
            // No user notifications: listing a socket opens every one.
            ["own", "relative", "daemon", "link"]
                .map(|w| format!("{w} connected"))
                .to_vec()
        } else {
            vec!["own EPERM".into()]
        };
        for line in &expected {
            assert!(text.contains(line.as_str()), "{line}: {text}");
        }
        // The agent's variable is passed only for a listed socket.
        assert_eq!(
            text.contains(&format!("agent={}", sock.display())),
            listed,
            "{text}"
        );
        if listed {
            assert!(
                run.stderr.contains("sandbox.unix_sockets: "),
                "{}",
                run.stderr
            );
            assert_eq!(
                run.result()["runner_sandbox"]["unix_sockets"],
                json!([sock.display().to_string()])
            );
        }
        mock.assert_clean();
    }
    drop(listener);
}

/// A probe of the channels Landlock alone leaves open: credentials the home directory's
/// allow list does not name, metadata outside the roots, stream protocols other than TCP, a
/// UDP socket, and resource limits set on another process. One line per attempt.
const CHANNELS_PROBE: &str = r#"import os, socket, errno, resource, sys
def attempt(name, f):
    try:
        f()
        print(name, "done")
    except OSError as e:
        print(name, errno.errorcode.get(e.errno))
home = os.path.expanduser("~")
attempt("pgpass", lambda: open(os.path.join(home, ".pgpass")).read())
attempt("toolchain", lambda: open(os.path.join(home, ".cargo/config.toml")).read())
attempt("chmod", lambda: os.chmod(sys.argv[1], 0o644))
attempt("mptcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 262))
attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 0))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
# The parent, or in a PID namespace of the command's own (where the parent is out of sight:
# pid 0, which would name the caller) the namespace's init.
attempt("prlimit", lambda: resource.prlimit(os.getppid() or 1, resource.RLIMIT_FSIZE, (0, 0)))
"#;

#[test]
fn credentials_off_the_list_metadata_other_protocols_and_other_processes_are_refused() {
    if !confinable() || which_python().is_none() {
        return;
    }
    let repo = TestRepo::new();
    let out = OutDir::new();
    let outside = out.path().join("id_rsa");
    std::fs::write(&outside, "key").unwrap();
    std::fs::set_permissions(
        &outside,
        std::os::unix::fs::PermissionsExt::from_mode(0o600),
    )
    .unwrap();
    repo.write("probe.py", CHANNELS_PROBE);
    let mock = MockAnthropic::start(vec![
        tool_turn(
            "t1",
            "Bash",
            json!({"command": format!("python3 probe.py {}", outside.display())}),
        ),
        text_turn("done"),
    ]);
    let spec_path = write_spec(
        repo.path(),
        &spec("permissions:\n  mode: bypassPermissions\nsandbox:\n  network: [\"crates.io\"]\n"),
    );
    let home = home_with_credentials(&out);
    std::fs::write(home.join(".pgpass"), "db:5432:*:me:hunter2").unwrap();
    std::fs::create_dir_all(home.join(".cargo")).unwrap();
    std::fs::write(home.join(".cargo/config.toml"), "[build]").unwrap();
    let run = exec(&mock, &repo, &out)
        .json()
        .arg(&spec_path)
        .env("HOME", &home)
        .run();
    // runner outlives the attempt on its limits and reports.
    run.expect_code(0);
    let text = mock.request(1).tool_result_text("t1").unwrap();
    let support = runner::sandbox::support();
    let mut expected = vec!["pgpass EACCES", "toolchain done", "prlimit EPERM"];
    if support.landlock_net() {
        expected.extend(["mptcp EPERM", "tcp done", "udp EPERM"]);
    }
    if support.namespaces.is_some() {
        expected.push("chmod EROFS");
    }
    for line in expected {
        assert!(text.contains(line), "{line}: {text}");
    }
    if support.namespaces.is_some() {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&outside).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    assert!(!text.contains("hunter2"), "{text}");
    mock.assert_clean();
}

fn which_python() -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("python3"))
            .find(|p| p.is_file())
    })
}
