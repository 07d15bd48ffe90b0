//! End-to-end: project instructions — `instructions: true` finds AGENTS.md and CLAUDE.md from
//! the workdir up to the repository root, nearest first, sends them as a system reminder at the
//! start of the first prompt, and records their paths and hashes; off by default.

use sha2::{Digest, Sha256};

use crate::support::*;

fn sha256(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

const ROOT_AGENTS: &str = "Root rule: run cargo fmt.\n";
const ROOT_CLAUDE: &str = "Claude rule: keep commits small.\n";
const NEAR_AGENTS: &str = "Crate rule: no unwrap here.\n";

fn repo_with_instructions() -> TestRepo {
    let repo = TestRepo::new();
    repo.write("AGENTS.md", ROOT_AGENTS);
    repo.write("CLAUDE.md", ROOT_CLAUDE);
    repo.write("crates/core/AGENTS.md", NEAR_AGENTS);
    repo.write("crates/core/lib.rs", "\n");
    repo.commit_all("instructions");
    repo
}

#[test]
fn instructions_are_found_nearest_first_sent_and_recorded() {
    let repo = repo_with_instructions();
    let mock = MockAnthropic::start(vec![text_turn("ok")]);
    let out = OutDir::new();
    let spec_dir = tempfile::tempdir().unwrap();
    let workdir = repo.path().join("crates/core");
    let spec = write_spec(
        spec_dir.path(),
        &format!(
            "name: instr\nprompt: THE TASK\nmodel: claude-sonnet-4-5\nworkdir: {:?}\ninstructions: true\n",
            workdir.display().to_string()
        ),
    );
    let run = exec(&mock, &repo, &out).stream_json().arg(&spec).run();
    run.expect_code(0);

    // The first user message: the reminder (nearest file first), then the prompt.
    let first = mock.request(0).message_text(0);
    assert!(first.starts_with("<system-reminder>"), "{first}");
    let near = first.find(NEAR_AGENTS.trim()).expect("crate AGENTS.md");
    let root = first.find(ROOT_AGENTS.trim()).expect("root AGENTS.md");
    let claude = first.find(ROOT_CLAUDE.trim()).expect("root CLAUDE.md");
    let task = first.find("THE TASK").expect("the prompt");
    assert!(near < root && root < claude && claude < task, "{first}");
    assert!(
        first.contains(&format!(
            "Contents of {} (project instructions",
            workdir.join("AGENTS.md").display()
        )),
        "{first}"
    );

    // Recorded with paths and hashes, in the stream and the transcript.
    let frames = run.system("runner_instructions");
    assert_eq!(frames.len(), 1, "{}", run.stdout);
    let files = frames[0]["files"].as_array().unwrap();
    let got: Vec<(String, String, u64)> = files
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_string(),
                f["sha256"].as_str().unwrap().to_string(),
                f["bytes"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = |p: std::path::PathBuf, text: &str| {
        (p.display().to_string(), sha256(text), text.len() as u64)
    };
    assert_eq!(
        got,
        [
            want(workdir.join("AGENTS.md"), NEAR_AGENTS),
            want(repo.path().join("AGENTS.md"), ROOT_AGENTS),
            want(repo.path().join("CLAUDE.md"), ROOT_CLAUDE),
        ]
    );
    let all = run.json();
    let result = events_of(&all, "result", None)[0];
    let record = transcript_of(result)
        .into_iter()
        .find(|r| r["subtype"] == "runner_instructions")
        .expect("a runner_instructions record");
    assert_eq!(&record["files"], &frames[0]["files"]);
    mock.assert_clean();
}

#[test]
fn a_list_names_the_files_and_instructions_are_off_by_default() {
    let repo = repo_with_instructions();
    let mock = MockAnthropic::start(vec![text_turn("ok"), text_turn("ok")]);
    let out = OutDir::new();
    let spec_dir = tempfile::tempdir().unwrap();
    let only_claude = write_spec_named(
        spec_dir.path(),
        "a.yaml",
        &format!(
            "name: a\nprompt: A\nmodel: claude-sonnet-4-5\nworkdir: {:?}\ninstructions: [CLAUDE.md]\n",
            repo.path().display().to_string()
        ),
    );
    let run = exec(&mock, &repo, &out).json().arg(&only_claude).run();
    run.expect_code(0);
    let first = mock.request(0).message_text(0);
    assert!(first.contains(ROOT_CLAUDE.trim()), "{first}");
    assert!(!first.contains(ROOT_AGENTS.trim()), "{first}");

    let off = write_spec_named(
        spec_dir.path(),
        "b.yaml",
        &format!(
            "name: b\nprompt: B\nmodel: claude-sonnet-4-5\nworkdir: {:?}\n",
            repo.path().display().to_string()
        ),
    );
    let run = exec(&mock, &repo, &out).json().arg(&off).run();
    run.expect_code(0);
    let first = mock.request(1).message_text(0);
    assert!(!first.contains("system-reminder"), "{first}");
    assert!(!first.contains("rule:"), "{first}");
    assert!(
        !transcript_of(&run.result())
            .iter()
            .any(|r| r["subtype"] == "runner_instructions")
    );
    mock.assert_clean();
}
