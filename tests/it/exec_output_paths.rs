//! Every path a run writes is checked before the first model request (exit 2, nothing spent),
//! and a report that cannot be written later makes the run fail, naming the file.

use crate::support::*;

/// `runner exec SPEC ARGS...` against a mock that would answer once; the run must stop before
/// asking it anything.
fn refused(args: &[&str]) -> Run {
    let repo = TestRepo::new();
    repo.write("blocker", "a file where a directory should be\n");
    let mock = MockAnthropic::start(vec![text_turn("never asked")]);
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
    let run = Runner::against(&mock)
        .current_dir(repo.path())
        .arg("exec")
        .args(args)
        .arg(&spec)
        .run();
    run.expect_code(2);
    assert_eq!(mock.served(), 0, "nothing is spent: {}", run.stderr);
    assert!(run.stderr.contains("nothing was run"), "{}", run.stderr);
    run
}

#[test]
fn a_transcript_dir_with_a_file_in_the_way_is_invalid_input() {
    let run = refused(&["--transcript-dir", "blocker"]);
    assert!(
        run.stderr
            .contains("--transcript-dir blocker: exists and is not a directory"),
        "{}",
        run.stderr
    );
    let run = refused(&["--transcript-dir", "blocker/sub"]);
    assert!(
        run.stderr
            .contains("--transcript-dir blocker/sub: cannot be created"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_junit_path_under_a_file_is_invalid_input() {
    let run = refused(&["--junit", "blocker/j.xml"]);
    assert!(
        run.stderr
            .contains("--junit blocker/j.xml: its directory blocker"),
        "{}",
        run.stderr
    );
    let run = refused(&["--junit", "/dev/null"]);
    assert!(
        run.stderr.contains("is not a regular file"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_output_file_that_is_a_directory_is_invalid_input() {
    let run = refused(&["--output-file", "."]);
    assert!(
        run.stderr.contains("--output-file .: is a directory"),
        "{}",
        run.stderr
    );
}

#[test]
fn patch_dir_and_record_are_checked_too() {
    let run = refused(&["--patch-dir", "blocker"]);
    assert!(run.stderr.contains("--patch-dir blocker"), "{}", run.stderr);
    let run = refused(&["--record", "blocker/c.jsonl"]);
    assert!(
        run.stderr.contains("--record blocker/c.jsonl"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_output_file_that_fails_to_write_fails_the_run() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
    // /dev/full takes the open and refuses the write: a disk that filled up during the run.
    let run = exec(&mock, &repo, &out)
        .args(["--output-file", "/dev/full"])
        .arg(&spec)
        .run();
    run.expect_code(1);
    assert!(
        run.stderr
            .contains("cannot write the output file /dev/full"),
        "{}",
        run.stderr
    );
    mock.assert_clean();
}

#[test]
fn a_transcript_that_fails_to_write_fails_the_run_and_is_in_the_result() {
    let repo = TestRepo::new();
    let mock = MockAnthropic::start(vec![text_turn("done")]);
    let out = OutDir::new();
    let spec = write_spec(repo.path(), "name: t\nprompt: hi\n");
    // The transcript's first record (system prompt and tool schemas) is larger than this.
    let run = exec(&mock, &repo, &out)
        .file_size_limit(2048)
        .json()
        .arg(&spec)
        .run();
    run.expect_code(1);
    let r = run.result();
    // The model finished, but the evidence of the task is missing: not a success.
    assert_eq!(r["runner_outcome"], "agent_error", "{r}");
    assert!(
        r["errors"][0]
            .as_str()
            .unwrap()
            .starts_with("the task's work finished, but its reports could not be written: cannot write the transcript"),
        "{r}"
    );
    let errors = r["runner_report_errors"]
        .as_array()
        .expect("report errors listed");
    assert!(
        errors.iter().any(
            |e| e.as_str().unwrap().contains("cannot write the transcript")
                && e.as_str().unwrap().contains("transcript.jsonl")
        ),
        "{r}"
    );
    assert!(
        run.stderr.contains("report file(s) could not be written"),
        "{}",
        run.stderr
    );
}

/// A patch that does not fit on its disk (a 64 KiB tmpfs as `--patch-dir`; root only, where
/// the test can mount one): the task is not a success, the error names the patch, and no empty
/// or partial patch file is left for a later step to apply.
#[test]
fn a_patch_that_does_not_fit_leaves_no_patch_file() {
    let disk = tempfile::tempdir().unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
        .arg(disk.path())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (not root)");
        return;
    }
    struct Unmount<'a>(&'a std::path::Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(self.0).status();
        }
    }
    let _unmount = Unmount(disk.path());
    let repo = TestRepo::new();
    repo.write(".gitignore", ".runner/\n");
    repo.commit_all("ignore");
    // 200 KB of new lines: the patch is larger than the disk it goes to.
    let big: String = (0..4000)
        .map(|i| format!("line {i:>6} of a large new file\n"))
        .collect();
    let mock =
        MockAnthropic::start(vec![
        Resp::new()
            .tool_use_fragments(
                "toolu_1",
                "Write",
                &[&serde_json::json!({"file_path": format!("{WORKDIR}/big.txt"), "content": big})
                    .to_string()],
            )
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let spec = write_spec(
        repo.path(),
        "name: big\nprompt: hi\npermissions:\n  mode: acceptEdits\n",
    );
    let run = exec(&mock, &repo, &out)
        .arg("--patch-dir")
        .arg(disk.path())
        .json()
        .arg(&spec)
        .run();
    run.expect_code(1);
    let r = run.result();
    assert_eq!(r["runner_outcome"], "agent_error", "{r}");
    let error = r["errors"][0].as_str().unwrap();
    assert!(error.contains("write the patch"), "{error}");
    let left: Vec<_> = std::fs::read_dir(disk.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "files left on the full disk: {left:?}");
    mock.assert_clean();
}
