//! End-to-end: runner's own git work does not follow what a task wrote into the repository's
//! git settings (`core.worktree`, filter and diff drivers, a pooled worktree's `.git` file),
//! and the checkout credential in `.git/config` is out of the tasks' reach during the run and
//! back after it, also after a signal and after a run that was killed.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use nix::sys::signal::Signal;
use serde_json::{Value, json};

use crate::support::*;

const KEY: &str = "FAKE-PRIVATE-KEY-7f3a9c";
const TOKEN: &str = "ghs_TrustTestToken0123456789abcdefghijkl";

fn bash(cmd: &str) -> MockTurn {
    tool_turn("toolu_1", "Bash", json!({ "command": cmd }))
}

fn patch_of(r: &Value) -> String {
    let p = r["runner_git"]["patch"].as_str().expect("a patch path");
    std::fs::read_to_string(p).unwrap()
}

/// Every file under `dir`, with its content.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if e.file_type().unwrap().is_dir() {
            out.extend(files(&p));
        } else {
            out.push((
                p.display().to_string(),
                std::fs::read_to_string(&p).unwrap_or_default(),
            ));
        }
    }
    out.sort();
    out
}

/// A task run in place sets `core.worktree` to a directory holding a private key, and adds
/// filter, textconv, fsmonitor and hooks settings that would leave a marker: the patch holds
/// the task's change only, no marker appears, the key's directory is untouched.
#[test]
fn settings_a_task_writes_are_not_followed_by_the_snapshot() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit_all("init");
    let out = OutDir::new();
    let home = out.path().join("home/.ssh");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::write(home.join("id_rsa"), format!("{KEY}\n")).unwrap();
    let marker = out.path().join("marker");
    let before = files(&home);
    let m = marker.display();
    // A script the policy cannot see into (runner's own rules keep `git config` and
    // redirections off `.git`), outside the repository.
    let script = out.path().join("plant.py");
    let settings = format!(
        "[core]\n\tworktree = {home}\n\tfsmonitor = touch {m}\n\thooksPath = {hooks}\n\
         [filter \"x\"]\n\tclean = touch {m}; cat\n\tsmudge = touch {m}; cat\n\
         [diff \"x\"]\n\ttextconv = touch {m}; cat\n",
        home = home.display(),
        hooks = out.path().display(),
    );
    std::fs::write(
        &script,
        format!(
            "open('a.txt', 'a').write('two\\n')\n\
             open('.gitattributes', 'w').write('* filter=x diff=x\\n')\n\
             open('.git/config', 'a').write({settings:?})\nprint('done')\n"
        ),
    )
    .unwrap();
    let cmd = format!("python3 {}", script.display());
    std::fs::write(
        out.path().join("post-commit"),
        format!("#!/bin/sh\ntouch {m}\n"),
    )
    .unwrap();
    let spec = write_spec(
        repo.path(),
        &named_task(
            "plant",
            // Rules naming the files let the change stand past the integrity check (which
            // would undo it at once), so runner's own git work meets it.
            "permissions:\n  mode: bypassPermissions\n  allow: [\"Edit(./.git/config)\", \"Edit(./.gitattributes)\"]\ngit:\n  branch: true\n",
        ),
    );
    let mock = MockAnthropic::start(vec![bash(&cmd), text_turn("done")]);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let r = run.result();
    let seen = mock.requests()[1].tool_result_text("toolu_1").unwrap();
    assert!(seen.contains("done"), "{seen}");
    let patch = patch_of(&r);
    assert!(!patch.contains(KEY), "the key is in the patch:\n{patch}");
    assert!(!patch.contains("id_rsa"), "{patch}");
    assert!(patch.contains("+two"), "{patch}");
    assert!(patch.contains(".gitattributes"), "{patch}");
    assert!(!marker.exists(), "a planted command ran");
    assert_eq!(files(&home), before);
    // The branch commit holds the same change, read from the repository's own objects.
    let commit = r["runner_git"]["commit"].as_str().expect("a branch commit");
    let show = git(
        &repo.path().join(".git"),
        &["--git-dir=.", "show", "--format=", "--stat", commit],
    );
    assert!(show.contains("a.txt") && !show.contains("id_rsa"), "{show}");
    mock.assert_clean();
}

/// In a batch's pool of checked-out worktrees, the first task points its worktree's `.git` file
/// at another repository whose `core.worktree` is a directory outside: runner's reset neither
/// writes nor deletes there, and the next task runs in a clean worktree of the right repository.
#[test]
fn a_pooled_worktree_pointed_elsewhere_is_made_anew() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit_all("init");
    let out = OutDir::new();
    let victim = out.path().join("victim");
    std::fs::create_dir_all(&victim).unwrap();
    std::fs::write(victim.join("keep.txt"), "keep\n").unwrap();
    // A clone: it has the objects, so a reset that followed it would get as far as writing.
    let elsewhere = out.path().join("elsewhere");
    git(
        out.path(),
        &["clone", "-q", repo.path().to_str().unwrap(), "elsewhere"],
    );
    git(
        &elsewhere,
        &["config", "core.worktree", victim.to_str().unwrap()],
    );
    let victim_before = files(&victim);
    let specs = repo.path().join("tasks");
    std::fs::create_dir(&specs).unwrap();
    // A rule naming `.git` lets the change stand past the integrity check.
    let extra = "permissions:\n  mode: bypassPermissions\n  allow: [\"Edit(./.git)\"]\ngit:\n  isolate: true\n";
    write_spec_named(
        &specs,
        "a.yaml",
        &named_task("first", &format!("workdir: ..\n{extra}")),
    );
    write_spec_named(
        &specs,
        "b.yaml",
        &named_task("second", &format!("workdir: ..\n{extra}")),
    );
    let script = out.path().join("poison.py");
    std::fs::write(
        &script,
        format!(
            "open('junk.txt', 'w').write('junk\\n')\nopen('.git', 'w').write('gitdir: {}\\n')\nprint('poisoned')\n",
            elsewhere.join(".git").display()
        ),
    )
    .unwrap();
    let poison = format!("python3 {}", script.display());
    let mock = MockAnthropic::start(vec![
        bash(&poison),
        text_turn("done"),
        bash("cat .git; git status --porcelain; ls"),
        text_turn("done"),
    ]);
    let run = exec(&mock, &repo, &out)
        .env("RUNNER_WORKTREES", "checkout")
        .args(["--jobs", "1"])
        .json()
        .arg(&specs)
        .run();
    run.expect_code(0);
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 4);
    let first = reqs[1].tool_result_text("toolu_1").unwrap();
    assert!(first.contains("poisoned"), "{first}");
    let second = reqs[3].tool_result_text("toolu_1").unwrap();
    assert!(
        !second.contains(elsewhere.to_str().unwrap()),
        "the next task ran in the poisoned worktree: {second}"
    );
    assert!(
        second.contains("gitdir: ") && second.contains("a.txt"),
        "{second}"
    );
    assert!(!second.contains("junk.txt"), "{second}");
    assert_eq!(files(&victim), victim_before, "the reset wrote outside");
    mock.assert_clean();
}

/// `.git/config` with `actions/checkout`'s extraheader and a token in an `insteadOf` URL.
fn with_checkout_credential(repo: &TestRepo) -> (String, String) {
    let b64 = base64::engine::general_purpose::STANDARD.encode(format!("x-access-token:{TOKEN}"));
    repo.git(&[
        "config",
        "http.https://github.com/.extraheader",
        &format!("AUTHORIZATION: basic {b64}"),
    ]);
    repo.git(&[
        "config",
        &format!("url.https://x-access-token:{TOKEN}@github.com/.insteadOf"),
        "https://github.com/",
    ]);
    let config = std::fs::read_to_string(repo.path().join(".git/config")).unwrap();
    (config, b64)
}

/// The credential is not in the configuration any confined command reads during the run, in
/// no form; it is back byte for byte after it.
#[test]
fn the_checkout_credential_is_hidden_during_the_run() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit_all("init");
    let (config, b64) = with_checkout_credential(&repo);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &named_task("read", ""));
    let mock = MockAnthropic::start(vec![
        bash("cat .git/config; tr 'a-z' 'A-Z' < .git/config; grep -o . .git/config | tr -d '\\n'"),
        text_turn("done"),
    ]);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);
    let seen = mock.requests()[1].tool_result_text("toolu_1").unwrap();
    assert!(seen.contains("[core]"), "the command did not run: {seen}");
    for gone in [
        "extraheader",
        "EXTRAHEADER",
        "x-access-token",
        "X-ACCESS-TOKEN",
    ] {
        assert!(!seen.contains(gone), "{gone} in {seen}");
    }
    assert!(!seen.contains(&b64) && !seen.contains(TOKEN), "{seen}");
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".git/config")).unwrap(),
        config
    );
    assert!(!out.transcripts().join(".git-credentials-hidden").exists());
    mock.assert_clean();
}

/// A SIGTERM while the model answers: the credential is out while the task runs and back byte
/// for byte when runner exits.
#[test]
fn the_checkout_credential_is_back_after_a_signal() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit_all("init");
    let (config, _) = with_checkout_credential(&repo);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &named_task("sig", ""));
    let mock = MockAnthropic::start(vec![MockTurn::Stall {
        events: Resp::new().text("slow").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }]);
    let started = spawn_exec(&mock, &repo, &out, &spec);
    assert!(mock.wait_for_requests(1, Duration::from_secs(30)));
    let during = std::fs::read_to_string(repo.path().join(".git/config")).unwrap();
    assert!(
        !during.contains("extraheader") && !during.contains(TOKEN),
        "{during}"
    );
    started.signal(Signal::SIGTERM);
    let run = started.wait();
    run.expect_code(143);
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".git/config")).unwrap(),
        config
    );
    mock.assert_clean();
}

/// A run killed outright leaves the credential out; the next run in the same transcript
/// directory puts it back before anything else.
#[test]
fn the_next_run_puts_back_what_a_killed_run_hid() {
    let repo = TestRepo::new();
    repo.write("a.txt", "one\n");
    repo.commit_all("init");
    let (config, _) = with_checkout_credential(&repo);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), &named_task("killed", ""));
    let mock = MockAnthropic::start(vec![MockTurn::Stall {
        events: Resp::new().text("slow").build(),
        after: 2,
        stall: Duration::from_secs(60),
    }]);
    let started = spawn_exec(&mock, &repo, &out, &spec);
    assert!(mock.wait_for_requests(1, Duration::from_secs(30)));
    started.signal(Signal::SIGKILL);
    let _ = started.wait();
    let left = std::fs::read_to_string(repo.path().join(".git/config")).unwrap();
    assert!(!left.contains(TOKEN), "{left}");
    // The next run: a spec that does not even load.
    let bad = write_spec(repo.path(), "name: bad\n");
    let mock2 = MockAnthropic::start(vec![]);
    exec(&mock2, &repo, &out).arg(&bad).run().expect_code(2);
    assert_eq!(
        std::fs::read_to_string(repo.path().join(".git/config")).unwrap(),
        config
    );
    assert!(!out.transcripts().join(".git-credentials-hidden").exists());
}
