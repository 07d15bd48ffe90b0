//! Build metadata for `runner --version`: the git commit and the target the binary was built for;
//! and, for release builds on x86_64 Linux, the order of the binary's functions (`symbol_order`).
//!
//! The commit comes from, in order: `RUNNER_GIT_COMMIT` (set by the release workflow), the git
//! checkout the crate is built in, or the `.cargo_vcs_info.json` that `cargo package` writes
//! into a published crate. A build from a plain source tarball says `unknown`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    println!("cargo:rerun-if-env-changed=RUNNER_GIT_COMMIT");
    println!("cargo:rerun-if-changed=build.rs");
    let commit = std::env::var("RUNNER_GIT_COMMIT")
        .ok()
        .filter(|c| !c.trim().is_empty())
        .map(|c| short(c.trim()))
        .or_else(|| git_commit(&manifest_dir))
        .or_else(|| vcs_info_commit(&manifest_dir))
        .unwrap_or_else(|| "unknown".to_string());
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_string());
    println!("cargo:rustc-env=RUNNER_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=RUNNER_BUILD_TARGET={target}");
    symbol_order(&manifest_dir, &target);
}

/// Release builds for x86_64 Linux link `runner` with the toolchain's rust-lld and the
/// function order in `link/symbol-order.txt` (made by `scripts/symbol-order.py` from a
/// profile): the code a run executes sits together, and the kernel maps less of the binary
/// in (BENCHMARKS.md, "The single task's footprint"). Any other build links as before: other
/// targets, debug builds, a toolchain without rust-lld, a linker chosen through RUSTFLAGS or
/// `RUNNER_SYMBOL_ORDER=0`.
fn symbol_order(manifest_dir: &Path, target: &str) {
    println!("cargo:rerun-if-env-changed=RUNNER_SYMBOL_ORDER");
    let order = manifest_dir.join("link").join("symbol-order.txt");
    println!("cargo:rerun-if-changed={}", order.display());
    let wanted = std::env::var("RUNNER_SYMBOL_ORDER").map_or(true, |v| v != "0");
    let release = std::env::var("PROFILE").is_ok_and(|p| p == "release");
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let own_linker = ["linker", "fuse-ld", "link-self-contained"]
        .iter()
        .any(|f| flags.contains(f));
    if !wanted || !release || own_linker || target != "x86_64-unknown-linux-gnu" || !order.is_file()
    {
        return;
    }
    let Some(gcc_ld) = rust_lld_dir() else {
        return;
    };
    for arg in [
        "-fuse-ld=lld".to_string(),
        format!("-B{}", gcc_ld.display()),
        format!("-Wl,--symbol-ordering-file={}", order.display()),
        "-Wl,--no-warn-symbol-ordering".to_string(),
    ] {
        println!("cargo:rustc-link-arg-bin=runner={arg}");
    }
}

/// The `gcc-ld` directory of the toolchain's rust-lld (its `ld.lld` for the C compiler
/// driver), when the toolchain has one: rustup installs it with every x86_64 Linux toolchain.
fn rust_lld_dir() -> Option<PathBuf> {
    let host = std::env::var("HOST").ok()?;
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let out = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    let bin = sysroot.join("lib").join("rustlib").join(host).join("bin");
    let gcc_ld = bin.join("gcc-ld");
    (bin.join("rust-lld").is_file() && gcc_ld.join("ld.lld").is_file()).then_some(gcc_ld)
}

/// The first 12 hex digits, like `git rev-parse --short=12`.
fn short(commit: &str) -> String {
    commit.chars().take(12).collect()
}

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    Some(text.trim().to_string()).filter(|t| !t.is_empty())
}

/// HEAD of the git checkout whose top level is the crate itself (not of a repository the
/// source happens to sit inside), and rebuild when HEAD moves.
fn git_commit(manifest_dir: &Path) -> Option<String> {
    let top = PathBuf::from(git(manifest_dir, &["rev-parse", "--show-toplevel"])?);
    if top.canonicalize().ok()? != manifest_dir.canonicalize().ok()? {
        return None;
    }
    let commit = git(manifest_dir, &["rev-parse", "--short=12", "HEAD"])?;
    // Rebuild when HEAD or the branch it points to moves. Only existing files: cargo reruns
    // the script on every build for a missing one.
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() { p } else { top.join(p) }
    };
    let mut watch = Vec::new();
    if let Some(head) = git(manifest_dir, &["rev-parse", "--git-path", "HEAD"]) {
        watch.push(abs(head));
    }
    if let Some(branch) = git(manifest_dir, &["symbolic-ref", "-q", "HEAD"])
        && let Some(p) = git(manifest_dir, &["rev-parse", "--git-path", &branch])
    {
        watch.push(abs(p));
    }
    if let Some(p) = git(manifest_dir, &["rev-parse", "--git-path", "packed-refs"]) {
        watch.push(abs(p));
    }
    for path in watch.iter().filter(|p| p.is_file()) {
        println!("cargo:rerun-if-changed={}", path.display());
    }
    Some(commit)
}

/// `git.sha1` from the `.cargo_vcs_info.json` of a crate built from crates.io.
fn vcs_info_commit(manifest_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(manifest_dir.join(".cargo_vcs_info.json")).ok()?;
    let rest = &text[text.find("\"sha1\"")? + "\"sha1\"".len()..];
    let rest = rest.trim_start().strip_prefix(':')?.trim_start();
    let rest = rest.strip_prefix('"')?;
    let sha = &rest[..rest.find('"')?];
    (!sha.is_empty() && sha.chars().all(|c| c.is_ascii_hexdigit())).then(|| short(sha))
}
