//! Distribution: the packaging script the release workflow runs (on the host target), the
//! installer against fake releases served on 127.0.0.1, the composite action's scripts, and
//! the metadata that points at the release files.
//!
//! The archives are built from the freshly built binary; nothing here leaves the machine.

use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex, OnceLock};

use axum::Router;
use axum::extract::Request;
use axum::http::StatusCode;
use sha2::{Digest, Sha256};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn script(name: &str) -> PathBuf {
    repo_root().join("scripts").join(name)
}

/// A command with none of the variables the scripts read, and no proxy for 127.0.0.1.
fn clean_cmd(program: impl AsRef<std::ffi::OsStr>) -> Command {
    let mut cmd = Command::new(program);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("RUNNER_")
            || key.starts_with("GITHUB_")
            || key.starts_with("INPUT_")
            || key.starts_with("ACTION_")
            || key.starts_with("ANTHROPIC_")
            || key.to_ascii_lowercase().ends_with("_proxy")
        {
            cmd.env_remove(&key);
        }
    }
    cmd
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn describe(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    )
}

fn sha256_hex(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn write_executable(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Files in `dir`, sorted (empty when `dir` does not exist).
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The freshly built runner with its debug info stripped (as the release profile does), so
/// packing it takes seconds; the unstripped binary when `strip` is not installed.
fn release_binary() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let built = PathBuf::from(env!("CARGO_BIN_EXE_runner"));
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("install-test");
        std::fs::create_dir_all(&dir).unwrap();
        let staged = dir.join(format!("runner.{}", std::process::id()));
        let stripped = Command::new("strip")
            .arg("-o")
            .arg(&staged)
            .arg(&built)
            .status()
            .is_ok_and(|s| s.success());
        if !stripped {
            std::fs::copy(&built, &staged).unwrap();
        }
        let bin = dir.join("runner");
        std::fs::rename(&staged, &bin).unwrap();
        bin
    })
}

/// `runner --version` of the freshly built binary: (version line, build target).
fn built_version() -> (String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_runner"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let all = text(&out.stdout);
    let mut lines = all.lines();
    let line = lines.next().unwrap_or_default().to_string();
    // The second line names the source the binary is published from.
    assert_eq!(
        lines.next(),
        Some(concat!("source: ", env!("CARGO_PKG_REPOSITORY"))),
        "{all}"
    );
    let target = line
        .strip_suffix(')')
        .and_then(|l| l.rsplit_once(", "))
        .map(|(_, t)| t.to_string())
        .unwrap_or_else(|| panic!("no build target in {line:?}"));
    (line, target)
}

/// The release target install.sh picks on this machine.
fn installer_target() -> String {
    let cpu = match std::env::consts::ARCH {
        "x86_64" => "x86_64",
        "aarch64" => "aarch64",
        other => panic!("no release is built for the CPU {other}"),
    };
    match std::env::consts::OS {
        "linux" => format!("{cpu}-unknown-linux-musl"),
        "macos" => format!("{cpu}-apple-darwin"),
        other => panic!("no release is built for {other}"),
    }
}

/// A stand-in binary that says which version it is; packs in no time.
fn fake_binary(dir: &Path, version: &str) -> PathBuf {
    let path = dir.join(format!("fake-{version}"));
    write_executable(
        &path,
        &format!("#!/bin/sh\necho \"fake runner {version}\"\n"),
    );
    path
}

fn package_archive(version: &str, target: &str, binary: &Path, out: &Path) -> PathBuf {
    let run = clean_cmd("sh")
        .arg(script("package.sh"))
        .args(["archive", version, target])
        .arg(binary)
        .arg(out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "package.sh archive: {}",
        describe(&run)
    );
    PathBuf::from(text(&run.stdout).trim())
}

fn package_checksums(dir: &Path) -> PathBuf {
    let run = clean_cmd("sh")
        .arg(script("package.sh"))
        .arg("checksums")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "package.sh checksums: {}",
        describe(&run)
    );
    PathBuf::from(text(&run.stdout).trim())
}

/// A release mirror in GitHub's layout: `download/vX.Y.Z/…` and `latest/download/SHA256SUMS`.
struct Mirror {
    root: tempfile::TempDir,
}

impl Mirror {
    fn new() -> Mirror {
        Mirror {
            root: tempfile::tempdir().unwrap(),
        }
    }

    fn release_dir(&self, version: &str) -> PathBuf {
        self.root.path().join(format!("download/v{version}"))
    }

    /// Package `binary` as release `version` for `target`, with its SHA256SUMS.
    fn publish(&self, version: &str, target: &str, binary: &Path) -> PathBuf {
        let dir = self.release_dir(version);
        let archive = package_archive(version, target, binary, &dir);
        package_checksums(&dir);
        archive
    }

    fn set_latest(&self, version: &str) {
        let latest = self.root.path().join("latest/download");
        std::fs::create_dir_all(&latest).unwrap();
        std::fs::copy(
            self.release_dir(version).join("SHA256SUMS"),
            latest.join("SHA256SUMS"),
        )
        .unwrap();
    }
}

/// A static file server on 127.0.0.1 that records the paths asked for.
struct FileServer {
    addr: SocketAddr,
    requests: Arc<Mutex<Vec<String>>>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FileServer {
    fn start(root: &Path) -> FileServer {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (shutdown, stop) = tokio::sync::oneshot::channel::<()>();
        let (root, log) = (root.to_path_buf(), requests.clone());
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = Router::new().fallback(move |req: Request| {
                    let (root, log) = (root.clone(), log.clone());
                    async move {
                        let path = req.uri().path().to_string();
                        log.lock().unwrap().push(path.clone());
                        let rel = path.trim_start_matches('/');
                        if rel.split('/').any(|c| c == ".." || c.is_empty()) {
                            return Err(StatusCode::NOT_FOUND);
                        }
                        std::fs::read(root.join(rel)).map_err(|_| StatusCode::NOT_FOUND)
                    }
                });
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stop => {}
                }
            });
        });
        FileServer {
            addr,
            requests,
            shutdown: Some(shutdown),
            thread: Some(thread),
        }
    }

    /// What RUNNER_RELEASE_BASE_URL is for this mirror.
    fn base_url(&self) -> String {
        format!("http://{}/download", self.addr)
    }

    fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for FileServer {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// `/bin/sh scripts/install.sh ARGS` with `env` (which may set a PATH without `sh`), HOME in
/// `home`.
fn install(home: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = clean_cmd("/bin/sh");
    cmd.arg(script("install.sh")).args(args).env("HOME", home);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

#[test]
fn package_script_writes_the_archive_and_checksums_for_the_host_target() {
    let (version_line, host) = built_version();
    assert!(
        version_line.starts_with(&format!("runner {VERSION} (commit ")),
        "{version_line}"
    );
    let out = tempfile::tempdir().unwrap();
    let dist = out.path().join("dist");
    let archive = package_archive(&format!("v{VERSION}"), &host, release_binary(), &dist);
    let name = format!("runner-{VERSION}-{host}");
    assert_eq!(archive, dist.join(format!("{name}.tar.gz")));

    let listed = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let mut entries: Vec<String> = text(&listed.stdout)
        .lines()
        .map(|l| l.trim_end_matches('/').to_string())
        .collect();
    entries.sort();
    let expected: Vec<String> = [
        "",
        "/CHANGELOG.md",
        "/LICENSE-APACHE",
        "/LICENSE-MIT",
        "/README.md",
        "/runner",
    ]
    .iter()
    .map(|f| format!("{name}{f}"))
    .collect();
    assert_eq!(entries, expected);

    // The workflow attaches the schema and the installer and sums every file.
    for f in ["schema/task.schema.json", "scripts/install.sh"] {
        let src = repo_root().join(f);
        std::fs::copy(&src, dist.join(src.file_name().unwrap())).unwrap();
    }
    let sums = package_checksums(&dist);
    assert_eq!(sums, dist.join("SHA256SUMS"));
    let sums_text = std::fs::read_to_string(&sums).unwrap();
    let lines: Vec<&str> = sums_text.lines().collect();
    let expect_line = |file: &str| format!("{}  {file}", sha256_hex(&dist.join(file)));
    assert_eq!(
        lines,
        [
            expect_line("install.sh"),
            expect_line(&format!("{name}.tar.gz")),
            expect_line("task.schema.json"),
        ]
    );

    // What is inside runs and says what it is.
    let unpacked = out.path().join("unpacked");
    std::fs::create_dir(&unpacked).unwrap();
    let untar = Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(&unpacked)
        .status()
        .unwrap();
    assert!(untar.success());
    let bin = unpacked.join(&name).join("runner");
    assert_eq!(
        std::fs::metadata(&bin).unwrap().permissions().mode() & 0o777,
        0o755
    );
    let ran = Command::new(&bin).arg("--version").output().unwrap();
    assert_eq!(
        text(&ran.stdout).lines().next(),
        Some(version_line.as_str())
    );
}

#[test]
fn package_script_rejects_bad_arguments() {
    let out = tempfile::tempdir().unwrap();
    let bin = fake_binary(out.path(), "1.0.0");
    for (args, message) in [
        (
            vec!["archive", "1.0/0", "x86_64-unknown-linux-musl"],
            "version '1.0/0'",
        ),
        (vec!["archive", "1.0.0", ""], "target ''"),
    ] {
        let run = clean_cmd("sh")
            .arg(script("package.sh"))
            .args(&args)
            .arg(&bin)
            .arg(out.path().join("dist"))
            .output()
            .unwrap();
        assert!(!run.status.success(), "{}", describe(&run));
        assert!(text(&run.stderr).contains(message), "{}", describe(&run));
    }
    let missing = clean_cmd("sh")
        .arg(script("package.sh"))
        .args(["archive", "1.0.0", "t"])
        .arg(out.path().join("no-such-binary"))
        .arg(out.path().join("dist"))
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(text(&missing.stderr).contains("no such file"));
    assert!(!out.path().join("dist").exists());
}

#[test]
fn installer_installs_a_verified_release_whose_binary_runs() {
    let target = installer_target();
    let mirror = Mirror::new();
    mirror.publish(VERSION, &target, release_binary());
    mirror.set_latest(VERSION);
    let server = FileServer::start(mirror.root.path());
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("tools/bin");

    let out = install(
        home.path(),
        &[
            ("RUNNER_RELEASE_BASE_URL", &server.base_url()),
            ("RUNNER_INSTALL_DIR", dir.to_str().unwrap()),
            ("RUNNER_VERSION", &format!("v{VERSION}")),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let stdout = text(&out.stdout);
    assert_eq!(
        stdout,
        format!(
            "installed runner {VERSION} ({target}) to {}/runner (not on PATH: add {} to it)\n",
            dir.display(),
            dir.display()
        )
    );
    assert_eq!(listing(&dir), ["runner"]);
    let ran = Command::new(dir.join("runner"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", describe(&ran));
    assert!(
        text(&ran.stdout).starts_with(&format!("runner {VERSION} (commit ")),
        "{}",
        describe(&ran)
    );
    assert_eq!(
        server.requests(),
        [
            format!("/download/v{VERSION}/SHA256SUMS"),
            format!("/download/v{VERSION}/runner-{VERSION}-{target}.tar.gz"),
        ]
    );
}

#[test]
fn installer_version_picks_the_file_names_and_latest_is_resolved() {
    let target = installer_target();
    let mirror = Mirror::new();
    let scratch = tempfile::tempdir().unwrap();
    for v in ["1.0.0", "2.3.4-rc.1"] {
        mirror.publish(v, &target, &fake_binary(scratch.path(), v));
    }
    mirror.set_latest("1.0.0");
    let server = FileServer::start(mirror.root.path());
    let base = server.base_url();
    let home = tempfile::tempdir().unwrap();

    // An explicit version, with or without `v`.
    let out = install(
        home.path(),
        &[
            ("RUNNER_RELEASE_BASE_URL", &base),
            ("RUNNER_VERSION", "2.3.4-rc.1"),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", describe(&out));
    let installed = home.path().join(".local/bin/runner");
    let ran = Command::new(&installed).output().unwrap();
    assert_eq!(text(&ran.stdout), "fake runner 2.3.4-rc.1\n");
    assert_eq!(
        server.requests(),
        [
            "/download/v2.3.4-rc.1/SHA256SUMS".to_string(),
            format!("/download/v2.3.4-rc.1/runner-2.3.4-rc.1-{target}.tar.gz"),
        ]
    );

    // `latest` (the default) reads the latest release's SHA256SUMS and replaces the binary.
    server.requests.lock().unwrap().clear();
    let out = install(home.path(), &[("RUNNER_RELEASE_BASE_URL", &base)], &[]);
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        text(&out.stdout).starts_with(&format!("installed runner 1.0.0 ({target}) to ")),
        "{}",
        describe(&out)
    );
    assert_eq!(
        text(&Command::new(&installed).output().unwrap().stdout),
        "fake runner 1.0.0\n"
    );
    assert_eq!(listing(installed.parent().unwrap()), ["runner"]);
    assert_eq!(
        server.requests(),
        [
            "/latest/download/SHA256SUMS".to_string(),
            "/download/v1.0.0/SHA256SUMS".to_string(),
            format!("/download/v1.0.0/runner-1.0.0-{target}.tar.gz"),
        ]
    );

    // --resolve-version says which version, and downloads no archive.
    server.requests.lock().unwrap().clear();
    let out = install(
        home.path(),
        &[("RUNNER_RELEASE_BASE_URL", &base)],
        &["--resolve-version"],
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(text(&out.stdout), "1.0.0\n");
    let out = install(
        home.path(),
        &[
            ("RUNNER_RELEASE_BASE_URL", &base),
            ("RUNNER_VERSION", "v9.9.9"),
        ],
        &["--resolve-version"],
    );
    assert_eq!(text(&out.stdout), "9.9.9\n");
    assert_eq!(server.requests(), ["/latest/download/SHA256SUMS"]);

    // A version that is not released, or not a version at all.
    for (version, message) in [
        ("3.0.0", "could not download"),
        ("1.0;rm -rf", "is not a version"),
    ] {
        let out = install(
            home.path(),
            &[
                ("RUNNER_RELEASE_BASE_URL", &base),
                ("RUNNER_VERSION", version),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
        assert!(text(&out.stderr).contains(message), "{}", describe(&out));
    }
    assert_eq!(
        text(&Command::new(&installed).output().unwrap().stdout),
        "fake runner 1.0.0\n"
    );
}

#[test]
fn installer_refuses_a_wrong_checksum_and_installs_nothing() {
    let target = installer_target();
    let mirror = Mirror::new();
    let scratch = tempfile::tempdir().unwrap();
    mirror.publish("1.2.3", &target, &fake_binary(scratch.path(), "1.2.3"));
    let server = FileServer::start(mirror.root.path());
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("bin");
    std::fs::create_dir(&dir).unwrap();
    write_executable(&dir.join("runner"), "#!/bin/sh\necho old\n");
    let env = [
        ("RUNNER_RELEASE_BASE_URL", server.base_url()),
        ("RUNNER_INSTALL_DIR", dir.to_str().unwrap().to_string()),
        ("RUNNER_VERSION", "1.2.3".to_string()),
    ];
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let sums = mirror.release_dir("1.2.3").join("SHA256SUMS");
    let good = std::fs::read_to_string(&sums).unwrap();

    // One hex digit changed.
    let first = good.chars().next().unwrap();
    let flipped = if first == '0' { '1' } else { '0' };
    std::fs::write(&sums, format!("{flipped}{}", &good[1..])).unwrap();
    let out = install(home.path(), &env, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "checksum mismatch for runner-1.2.3-{target}.tar.gz"
        )) && stderr.contains("nothing installed"),
        "{}",
        describe(&out)
    );
    assert!(out.stdout.is_empty(), "{}", describe(&out));

    // No entry for the archive at all.
    std::fs::write(&sums, "0000  runner-1.2.3-other-target.tar.gz\n").unwrap();
    let out = install(home.path(), &env, &[]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains(&format!(
            "SHA256SUMS lists no checksum for runner-1.2.3-{target}.tar.gz"
        )),
        "{}",
        describe(&out)
    );

    // The old binary is untouched and nothing was left beside it.
    assert_eq!(listing(&dir), ["runner"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("runner")).unwrap(),
        "#!/bin/sh\necho old\n"
    );

    // With the right sums the same release installs: the failures were the checksums.
    std::fs::write(&sums, &good).unwrap();
    let out = install(home.path(), &env, &[]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        text(&Command::new(dir.join("runner")).output().unwrap().stdout),
        "fake runner 1.2.3\n"
    );
}

#[test]
fn installer_names_an_unknown_os_or_cpu() {
    let mirror = Mirror::new();
    let server = FileServer::start(mirror.root.path());
    let home = tempfile::tempdir().unwrap();
    let fake_bin = home.path().join("fake-uname");
    let path = format!(
        "{}:{}",
        fake_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for (os, cpu, message) in [
        (
            "FreeBSD",
            "x86_64",
            "no prebuilt runner for the operating system 'FreeBSD'",
        ),
        (
            "MINGW64_NT-10.0",
            "x86_64",
            "no prebuilt runner for the operating system 'MINGW64_NT-10.0'",
        ),
        (
            "Linux",
            "riscv64",
            "no prebuilt runner for the CPU 'riscv64' on Linux",
        ),
        (
            "Darwin",
            "ppc",
            "no prebuilt runner for the CPU 'ppc' on Darwin",
        ),
    ] {
        write_executable(
            &fake_bin.join("uname"),
            &format!("#!/bin/sh\ncase $1 in -s) echo '{os}' ;; -m) echo '{cpu}' ;; esac\n"),
        );
        let out = install(
            home.path(),
            &[
                ("PATH", &path),
                ("RUNNER_RELEASE_BASE_URL", &server.base_url()),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(1), "{os}/{cpu}: {}", describe(&out));
        let stderr = text(&out.stderr);
        assert!(
            stderr.contains(message) && stderr.contains("cargo install --locked --git"),
            "{os}/{cpu}: {}",
            describe(&out)
        );
    }
    assert!(server.requests().is_empty(), "{:?}", server.requests());
    assert!(!home.path().join(".local").exists());
}

/// A directory of links to the given host programs only, to run the installer without the
/// others.
fn only_programs(dir: &Path, programs: &[&str]) -> Result<(), String> {
    std::fs::create_dir_all(dir).unwrap();
    for p in programs {
        let found = Command::new("sh")
            .arg("-c")
            .arg(format!("command -v {p}"))
            .output()
            .unwrap();
        let found = text(&found.stdout).trim().to_string();
        if found.is_empty() {
            return Err(format!("{p} is not installed"));
        }
        std::os::unix::fs::symlink(&found, dir.join(p)).unwrap();
    }
    Ok(())
}

#[test]
fn installer_works_with_wget_and_shasum_and_needs_a_downloader() {
    let target = installer_target();
    let mirror = Mirror::new();
    let scratch = tempfile::tempdir().unwrap();
    mirror.publish("0.9.0", &target, &fake_binary(scratch.path(), "0.9.0"));
    let server = FileServer::start(mirror.root.path());
    let home = tempfile::tempdir().unwrap();
    let base = [
        "uname", "tar", "gzip", "mkdir", "mktemp", "rm", "cp", "chmod", "mv", "awk", "cut",
    ];
    let with = home.path().join("with-wget");
    let mut programs = base.to_vec();
    programs.extend(["wget", "shasum", "perl"]);
    if let Err(e) = only_programs(&with, &programs) {
        eprintln!("skipped: {e}");
        return;
    }
    let out = install(
        home.path(),
        &[
            ("PATH", with.to_str().unwrap()),
            ("RUNNER_RELEASE_BASE_URL", &server.base_url()),
            ("RUNNER_VERSION", "0.9.0"),
        ],
        &[],
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        text(
            &Command::new(home.path().join(".local/bin/runner"))
                .output()
                .unwrap()
                .stdout
        ),
        "fake runner 0.9.0\n"
    );

    let without = home.path().join("no-downloader");
    only_programs(&without, &base).unwrap();
    let out = install(
        home.path(),
        &[
            ("PATH", without.to_str().unwrap()),
            ("RUNNER_RELEASE_BASE_URL", &server.base_url()),
            ("RUNNER_VERSION", "0.9.0"),
            (
                "RUNNER_INSTALL_DIR",
                home.path().join("elsewhere").to_str().unwrap(),
            ),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        text(&out.stderr).contains("neither curl nor wget is installed"),
        "{}",
        describe(&out)
    );
    assert!(!home.path().join("elsewhere").exists());
}

/// What a fake runner binary saw: its arguments, then ANTHROPIC_API_KEY.
fn action_run(env: &[(&str, &str)]) -> (Output, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let seen = dir.path().join("seen");
    let bin = dir.path().join("runner");
    write_executable(
        &bin,
        &format!(
            "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done >'{}'\nprintf 'key=%s\\n' \"${{ANTHROPIC_API_KEY-unset}}\" >>'{}'\n",
            seen.display(),
            seen.display()
        ),
    );
    let mut cmd = clean_cmd("bash");
    cmd.arg(script("action-run.sh")).env("RUNNER_BIN", &bin);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let seen = std::fs::read_to_string(&seen).unwrap_or_default();
    (out, seen.lines().map(str::to_string).collect())
}

#[test]
fn action_passes_args_one_per_line_and_the_api_key_through_the_environment() {
    let (out, argv) = action_run(&[
        ("RUNNER_TASKS", "tasks/ci  tasks/a b.yaml\ntasks/more\n"),
        ("RUNNER_JOBS", "2"),
        ("RUNNER_JUNIT", "junit.xml"),
        ("RUNNER_MODEL", "claude-x"),
        ("RUNNER_MAX_COST", ""),
        ("RUNNER_MODE", "acceptEdits"),
        ("RUNNER_PROVIDER", "bedrock"),
        (
            "RUNNER_ARGS",
            "--allowed-tools=Bash(git diff *)\n  --max-turns  \n40\n\n--disallowed-tools\r\nBash(git push:*)\n--shard 1/4 --append-system-prompt \"Be brief, \\\"really\\\"\" --name 'it x'",
        ),
        ("RUNNER_API_KEY", "sk-from-input"),
        ("ANTHROPIC_API_KEY", "sk-from-env"),
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        argv,
        [
            "exec",
            "--jobs",
            "2",
            "--junit",
            "junit.xml",
            "--model",
            "claude-x",
            "--permission-mode",
            "acceptEdits",
            "--provider",
            "bedrock",
            "--allowed-tools=Bash(git diff *)",
            "--max-turns",
            "40",
            "--disallowed-tools",
            "Bash(git push:*)",
            "--shard",
            "1/4",
            "--append-system-prompt",
            "Be brief, \"really\"",
            "--name",
            "it x",
            "tasks/ci",
            "tasks/a",
            "b.yaml",
            "tasks/more",
            "key=sk-from-input",
        ]
    );
    let stdout = text(&out.stdout);
    assert!(stdout.contains("::add-mask::sk-from-input"), "{stdout}");
    assert!(!stdout.contains("::warning"), "{stdout}");

    // A quote left open is an error naming the line; nothing runs.
    let (out, argv) = action_run(&[("RUNNER_TASKS", "t.yaml"), ("RUNNER_ARGS", "--name \"open")]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(
        text(&out.stdout).contains("is never closed"),
        "{}",
        describe(&out)
    );
    assert!(argv.is_empty(), "{argv:?}");

    // The prompt input: an inline task, without spec paths.
    let (out, argv) = action_run(&[
        ("RUNNER_PROMPT", "Fix the tests"),
        ("RUNNER_ARGS", "--max-turns 5"),
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        argv[5..],
        ["--max-turns", "5", "-p", "Fix the tests", "key=unset"]
    );

    // Without the input, the step's own ANTHROPIC_API_KEY is what runner sees.
    let (out, argv) = action_run(&[
        ("RUNNER_TASKS", "t.yaml"),
        ("RUNNER_API_KEY", ""),
        ("ANTHROPIC_API_KEY", "sk-from-env"),
    ]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        argv,
        [
            "exec",
            "--jobs",
            "1",
            "--junit",
            "runner-junit.xml",
            "t.yaml",
            "key=sk-from-env"
        ]
    );

    let (out, argv) = action_run(&[("RUNNER_TASKS", " \n ")]);
    assert_eq!(out.status.code(), Some(2), "{}", describe(&out));
    assert!(text(&out.stdout).contains("the tasks input is empty"));
    assert!(argv.is_empty());
}

/// Run scripts/action-plan.sh from a copy of the action at `action_path` and return its
/// outputs (`key=value` lines of $GITHUB_OUTPUT) and stdout.
fn action_plan(action_path: &Path, env: &[(&str, &str)]) -> (Output, Vec<(String, String)>) {
    let output = tempfile::NamedTempFile::new().unwrap();
    let mut cmd = clean_cmd("sh");
    cmd.arg(action_path.join("scripts/action-plan.sh"))
        .env("ACTION_PATH", action_path)
        .env("GITHUB_OUTPUT", output.path())
        .env("GITHUB_REPOSITORY", "someone/their-project")
        .env("RUNNER_OS", "Linux")
        .env("RUNNER_ARCH", "X64")
        .env("RUNNER_TOOL_CACHE", "/opt/hostedtoolcache");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let outputs = std::fs::read_to_string(output.path())
        .unwrap()
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    (out, outputs)
}

/// The action as GitHub checks it out for a remote `uses:`: `_actions/OWNER/REPO/REF`.
fn action_checkout(root: &Path, owner: &str, repo: &str, git_ref: &str, lock: &str) -> PathBuf {
    let dir = root.join("_actions").join(owner).join(repo).join(git_ref);
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    for s in ["action-plan.sh", "install.sh"] {
        std::fs::copy(script(s), dir.join("scripts").join(s)).unwrap();
    }
    std::fs::write(dir.join("Cargo.lock"), lock).unwrap();
    dir
}

fn outputs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn action_installs_release_tags_and_builds_commits_with_a_cache_key_per_lockfile() {
    let root = tempfile::tempdir().unwrap();
    let tagged = action_checkout(root.path(), "acme", "runner", "v1.2.3", "lock A");

    // A release tag, from github.action_ref or, when that is empty, the checkout's path.
    for env in [
        vec![
            ("ACTION_REF", "v1.2.3"),
            ("ACTION_REPOSITORY", "acme/runner"),
        ],
        vec![],
    ] {
        let (out, got) = action_plan(&tagged, &env);
        assert!(out.status.success(), "{}", describe(&out));
        assert_eq!(
            got,
            outputs(&[
                ("mode", "install"),
                ("version", "1.2.3"),
                (
                    "base-url",
                    "https://github.com/acme/runner/releases/download"
                ),
                ("bin-dir", "/opt/hostedtoolcache/runner/1.2.3/X64"),
                ("cache-key", "runner-bin-1.2.3-Linux-X64"),
            ])
        );
        assert!(text(&out.stdout).contains("installing release 1.2.3"));
    }

    // A major tag (`@v1`, moved by the release workflow): the release its source is, from the
    // checkout's Cargo.toml, not the latest of all releases.
    let major = action_checkout(root.path(), "acme", "runner", "v1", "lock A");
    std::fs::write(
        major.join("Cargo.toml"),
        "[workspace]\nmembers = []\n\n[package]\nname = \"runner\"\nversion = \"1.4.2\"\n",
    )
    .unwrap();
    let (out, got) = action_plan(&major, &[]);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(got[1], ("version".into(), "1.4.2".into()));
    assert!(
        text(&out.stdout).contains("used at v1, whose newest release is 1.4.2"),
        "{}",
        describe(&out)
    );

    // `version:` wins over the ref; RUNNER_RELEASE_BASE_URL points at a mirror.
    let (out, got) = action_plan(
        &tagged,
        &[
            ("INPUT_VERSION", "v2.0.0"),
            ("RUNNER_RELEASE_BASE_URL", "https://mirror.example/runner"),
        ],
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(got[1], ("version".into(), "2.0.0".into()));
    assert_eq!(
        got[2],
        ("base-url".into(), "https://mirror.example/runner".into())
    );

    // A commit SHA, a local path, or build-from-source: a source build whose cache key
    // follows the action's own Cargo.lock (hashFiles() cannot see it).
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let pinned_a = action_checkout(root.path(), "acme", "runner", sha, "lock A");
    let pinned_b = action_checkout(root.path(), "other", "runner", sha, "lock B");
    let local = root.path().join("workspace");
    std::fs::create_dir_all(local.join("scripts")).unwrap();
    std::fs::copy(
        script("action-plan.sh"),
        local.join("scripts/action-plan.sh"),
    )
    .unwrap();
    std::fs::write(local.join("Cargo.lock"), "lock A").unwrap();
    let mut keys = Vec::new();
    for (path, env, why) in [
        (&pinned_a, vec![("ACTION_REF", sha)], "pinned to the commit"),
        (&pinned_b, vec![], "pinned to the commit"),
        (&local, vec![], "local path"),
        (
            &tagged,
            vec![("INPUT_BUILD_FROM_SOURCE", "True")],
            "build-from-source: true",
        ),
    ] {
        let (out, got) = action_plan(path, &env);
        assert!(out.status.success(), "{}", describe(&out));
        assert!(text(&out.stdout).contains(why), "{}", describe(&out));
        let get = |k: &str| got.iter().find(|(key, _)| key == k).unwrap().1.clone();
        assert_eq!(get("mode"), "build");
        assert_eq!(get("bin-dir"), format!("{}/target/release", path.display()));
        let key = get("cache-key");
        assert!(key.starts_with(&get("cache-prefix")), "{key}");
        assert!(key.starts_with("runner-src-Linux-X64-"), "{key}");
        assert!(key.len() > "runner-src-Linux-X64-".len() + 10, "{key}");
        keys.push(key);
    }
    assert_eq!(keys[0], keys[2], "same Cargo.lock, same key");
    assert_eq!(keys[0], keys[3], "same Cargo.lock, same key");
    assert_ne!(keys[0], keys[1], "another Cargo.lock, another key");

    let (out, _) = action_plan(&tagged, &[("INPUT_BUILD_FROM_SOURCE", "yes")]);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stdout).contains("build-from-source must be true or false"));
}

#[test]
fn action_at_a_branch_installs_the_latest_release() {
    let target = installer_target();
    let mirror = Mirror::new();
    let scratch = tempfile::tempdir().unwrap();
    mirror.publish("4.5.6", &target, &fake_binary(scratch.path(), "4.5.6"));
    mirror.set_latest("4.5.6");
    let server = FileServer::start(mirror.root.path());
    let root = tempfile::tempdir().unwrap();
    let main = action_checkout(root.path(), "acme", "runner", "main", "lock");
    let base = server.base_url();
    let (out, got) = action_plan(
        &main,
        &[("ACTION_REF", "main"), ("RUNNER_RELEASE_BASE_URL", &base)],
    );
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(
        got,
        outputs(&[
            ("mode", "install"),
            ("version", "4.5.6"),
            ("base-url", &base),
            ("bin-dir", "/opt/hostedtoolcache/runner/4.5.6/X64"),
            ("cache-key", "runner-bin-4.5.6-Linux-X64"),
        ])
    );
    assert_eq!(server.requests(), ["/latest/download/SHA256SUMS"]);

    // No release there: a clear error that names the way out.
    let empty = Mirror::new();
    let none = FileServer::start(empty.root.path());
    let (out, got) = action_plan(
        &main,
        &[
            ("ACTION_REF", "main"),
            ("RUNNER_RELEASE_BASE_URL", &none.base_url()),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(
        text(&out.stdout).contains("set build-from-source: true"),
        "{}",
        describe(&out)
    );
    assert!(got.is_empty());
}

fn action_yml() -> yaml_serde::Value {
    let src = std::fs::read_to_string(repo_root().join("action.yml")).unwrap();
    yaml_serde::from_str(&src).unwrap()
}

#[test]
fn action_keeps_expressions_out_of_scripts_and_its_outputs() {
    let action = action_yml();
    let src = std::fs::read_to_string(repo_root().join("action.yml")).unwrap();
    let declared: Vec<String> = action["inputs"]
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    for used in src.split("inputs.").skip(1) {
        let name: String = used
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        assert!(declared.contains(&name), "inputs.{name} is not declared");
    }
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    for step in steps {
        if let Some(run) = step["run"].as_str() {
            assert!(!run.contains("${{"), "an expression inside a script: {run}");
            for word in run.split(['"', ' ', '\n']) {
                if let Some(rel) = word.strip_prefix("$ACTION_PATH/") {
                    assert!(repo_root().join(rel).is_file(), "{rel} is missing");
                }
            }
        }
        if let Some(key) = step["with"]["key"].as_str() {
            assert!(
                !key.contains("hashFiles"),
                "hashFiles() in a cache key: {key}"
            );
        }
    }
    let outputs: Vec<(String, String)> = action["outputs"]
        .as_mapping()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().unwrap().to_string(),
                v["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [
        "conclusion",
        "junit",
        "transcripts",
        "cost_usd",
        "structured_output",
    ]
    .iter()
    .map(|o| (o.to_string(), format!("${{{{ steps.run.outputs.{o} }}}}")))
    .collect();
    assert_eq!(outputs, expected);
}

#[test]
fn binstall_and_installer_agree_on_the_release_layout() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", describe(&out));
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let pkg = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "runner")
        .unwrap();
    let repo = pkg["repository"].as_str().unwrap();
    let binstall = &pkg["metadata"]["binstall"];
    let target = "aarch64-apple-darwin";
    let render = |template: &str| {
        template
            .replace("{ repo }", repo)
            .replace("{ name }", "runner")
            .replace("{ version }", VERSION)
            .replace("{ target }", target)
            .replace("{ bin }", "runner")
            .replace("{ binary-ext }", "")
    };
    let installer = std::fs::read_to_string(script("install.sh")).unwrap();
    let default_base = installer
        .lines()
        .find_map(|l| l.strip_prefix("DEFAULT_BASE_URL=\""))
        .and_then(|l| l.strip_suffix('"'))
        .unwrap();
    assert_eq!(default_base, format!("{repo}/releases/download"));
    assert_eq!(
        render(binstall["pkg-url"].as_str().unwrap()),
        format!("{default_base}/v{VERSION}/runner-{VERSION}-{target}.tar.gz")
    );
    assert_eq!(binstall["pkg-fmt"], "tgz");
    assert_eq!(
        render(binstall["bin-dir"].as_str().unwrap()),
        format!("runner-{VERSION}-{target}/runner")
    );
    // The schema's $id is the file every release attaches.
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("schema/task.schema.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        schema["$id"],
        format!("{repo}/releases/latest/download/task.schema.json")
    );
}

#[test]
fn release_notes_come_from_the_changelog() {
    let dir = tempfile::tempdir().unwrap();
    let changelog = dir.path().join("CHANGELOG.md");
    let mut f = std::fs::File::create(&changelog).unwrap();
    f.write_all(
        b"# Changelog\n\n## [1.1.0]\n\n- newer\n\n## 1.0.0\n\n- first\n- second\n\n## 0.9.0\n\n- old\n",
    )
    .unwrap();
    let notes = |version: &str, file: &Path| {
        clean_cmd("sh")
            .arg(script("release-notes.sh"))
            .arg(version)
            .arg(file)
            .output()
            .unwrap()
    };
    let out = notes("v1.0.0", &changelog);
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(text(&out.stdout), "- first\n- second\n");
    assert_eq!(text(&notes("1.1.0", &changelog).stdout), "- newer\n");
    let out = notes("2.0.0", &changelog);
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    assert!(text(&out.stderr).contains("no section `## 2.0.0`"));
    // The version being built can be released.
    let out = notes(VERSION, &repo_root().join("CHANGELOG.md"));
    assert!(out.status.success(), "{}", describe(&out));
}
