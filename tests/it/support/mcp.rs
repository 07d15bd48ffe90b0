//! MCP servers for the tests: the small stdio server in `mcp_stub.sh` (the failure cases) and
//! the real filesystem server from npm (pinned, installed by `.ci/run`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The stub server script.
pub fn mcp_stub() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/support/mcp_stub.sh")
}

/// An `mcp_servers:` section with one stub server called `name`, started with `args`, and
/// `extra` YAML lines (indented four spaces) under it.
pub fn stub_servers(name: &str, args: &[&str], extra: &[&str]) -> String {
    let mut all = vec![mcp_stub().display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    let mut s = format!(
        "mcp_servers:\n  {name}:\n    command: bash\n    args: {}\n",
        serde_json::to_string(&all).unwrap()
    );
    for line in extra {
        s.push_str(&format!("    {line}\n"));
    }
    s
}

/// The pinned version of `@modelcontextprotocol/server-filesystem` (as in `.ci/run`).
pub const FILESYSTEM_SERVER_VERSION: &str = "2026.8.31";

/// The entry script of the filesystem server in the cache `.ci/run` fills (npm, pinned;
/// tests never reach the network). `None` when it is not installed outside CI (the caller
/// skips with a message); under CI (`CI` set) a missing server fails the test.
pub fn filesystem_server() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let cache = std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
                .expect("HOME or XDG_CACHE_HOME");
            let entry = cache
                .join(format!(
                    "runner-ci/mcp-server-filesystem-{FILESYSTEM_SERVER_VERSION}"
                ))
                .join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
            let node = Command::new("node")
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success());
            if node && entry.is_file() {
                return Some(entry);
            }
            let why = format!(
                "the MCP filesystem server needs node and {} (.ci/run installs both)",
                entry.display()
            );
            assert!(std::env::var_os("CI").is_none(), "required under CI: {why}");
            eprintln!("SKIPPED: {why}");
            None
        })
        .clone()
}

/// Whether a process with this pid is running (not a zombie).
/// Whether a live (not zombie) process has `arg` in its command line. Commands and servers
/// run in PID namespaces of their own where runner can make them, so the pid they see of
/// themselves (`$$`) is not the one this test sees: they are found by an argument instead.
pub fn running_with_arg(arg: &str) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|e| {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else {
            return false;
        };
        std::fs::read(e.path().join("cmdline"))
            .map(|c| {
                c.split(|b| *b == 0)
                    .any(|a| String::from_utf8_lossy(a).contains(arg))
            })
            .unwrap_or(false)
            && process_running(pid)
    })
}

pub fn process_running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}
