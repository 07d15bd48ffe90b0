//! End-to-end: a declared secret the task can read is redacted in every form a command prints
//! it (`rev`, `base32`, `xxd -p`, rot13 with `tr`, `fold`) and in a file the task copies into
//! the workdir: absent from stdout, stderr, the transcript, `result.json`, JUnit, the step
//! summary, the patch, the branch commit and every request the model received.

use std::path::Path;

use crate::support::*;
use serde_json::json;

/// The secret: 26 bytes, so its halves (13 bytes) are matched too.
const SECRET: &str = "dpl-7Qx2Vr9Kc4Lm8Nz3Wb5Tyq";

fn bash(id: &str, command: &str) -> MockTurn {
    tool_turn(id, "Bash", json!({"command": command}))
}

/// The forms of [`SECRET`] that must not appear anywhere, lower case: looked for in a view
/// of each output with whitespace and `\n` escapes removed, lower-cased.
fn forbidden() -> Vec<(&'static str, String)> {
    let b = SECRET.as_bytes();
    let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
    let rot13: String = SECRET
        .chars()
        .map(|c| match c {
            'a'..='m' | 'A'..='M' => (c as u8 + 13) as char,
            'n'..='z' | 'N'..='Z' => (c as u8 - 13) as char,
            _ => c,
        })
        .collect();
    // The base32 of the secret's complete 5-byte groups (what `base32 FILE` starts with).
    let b32 = {
        const A: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
        let mut s = String::new();
        for chunk in b.chunks_exact(5) {
            let bits = chunk.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x));
            for i in 0..8 {
                s.push(A[((bits >> (35 - 5 * i)) & 31) as usize] as char);
            }
        }
        s
    };
    let h = SECRET.len().div_ceil(2);
    vec![
        ("raw", SECRET.to_lowercase()),
        (
            "reversed",
            SECRET.chars().rev().collect::<String>().to_lowercase(),
        ),
        ("rot13", rot13.to_lowercase()),
        ("hex", hex),
        ("base32", b32),
        ("first half", SECRET[..h].to_lowercase()),
        ("second half", SECRET[SECRET.len() - h..].to_lowercase()),
    ]
}

/// `text` without whitespace or `\n` escapes, lower case.
fn squashed(text: &str) -> String {
    text.replace("\\n", "")
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>()
        .to_lowercase()
}

/// Panic when any forbidden form of the secret is in `text` (from `what`).
fn assert_clean(what: &str, text: &str) {
    let s = squashed(text);
    for (form, f) in forbidden() {
        assert!(!s.contains(&f), "the secret ({form}) is in {what}:\n{text}");
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn a_secret_is_redacted_in_every_printed_form_and_every_artefact() {
    let repo = TestRepo::new();
    let out = OutDir::new();
    // The secret in a file the task can read, outside the workdir.
    let keys = out.path().join("keys");
    std::fs::create_dir_all(&keys).unwrap();
    let token = keys.join("deploy.token");
    std::fs::write(&token, format!("{SECRET}\n")).unwrap();
    let t = token.display();
    let mock = MockAnthropic::start(vec![
        bash("toolu_rev", &format!("rev {t}")),
        bash("toolu_b32", &format!("base32 {t}")),
        bash("toolu_xxd", &format!("xxd -p {t}")),
        bash("toolu_rot", &format!("tr a-zA-Z n-za-mN-ZA-M < {t}")),
        bash("toolu_fold", &format!("fold -w 5 {t}; od -c {t}")),
        bash(
            "toolu_half",
            &format!("cut -c1-13 {t}; cut -c14- {t} | tr a-z A-Z"),
        ),
        // Long output: spilled to a file in full, the middle line with it.
        bash("toolu_big", &format!("seq 1 30000; rev {t}; seq 1 30000")),
        bash(
            "toolu_cp",
            &format!("mkdir -p deploy && cp {t} deploy/token.txt && cat deploy/token.txt"),
        ),
        text_turn(&format!(
            "Copied. Reversed it reads {}.",
            SECRET.chars().rev().collect::<String>()
        )),
    ]);
    let spec = write_spec(
        repo.path(),
        "name: leak\nprompt: copy the deploy token\nmodel: claude-sonnet-4-5\nsecrets: [DEPLOY_TOKEN]\npermissions:\n  mode: bypassPermissions\ngit:\n  branch: runner/leak\n",
    );
    let summary = out.path().join("summary.md");
    let run = exec(&mock, &repo, &out)
        .env("DEPLOY_TOKEN", SECRET)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary)
        .junit(out.junit())
        .arg(&spec)
        .run();
    run.expect_code(0);

    // The commands ran and printed the secret's forms: the model got them redacted.
    let ids = [
        "toolu_rev",
        "toolu_b32",
        "toolu_xxd",
        "toolu_rot",
        "toolu_fold",
        "toolu_half",
        "toolu_big",
        "toolu_cp",
    ];
    for (k, id) in ids.iter().enumerate() {
        if *id == "toolu_big" {
            // Its middle line is in the spill file only.
            continue;
        }
        let text = mock
            .request(k + 1)
            .tool_result_text(id)
            .unwrap_or_else(|| panic!("no result for {id}"));
        assert!(text.contains("[REDACTED:DEPLOY_TOKEN]"), "{id}: {text}");
    }
    assert_clean("stdout", &run.stdout);
    assert!(
        run.stdout.contains("[REDACTED:DEPLOY_TOKEN]"),
        "{}",
        run.stdout
    );
    // (Actions masks the value itself in the job log: runner asks it to with `::add-mask::`.)
    let log: String = run
        .stderr
        .lines()
        .filter(|l| !l.starts_with("::add-mask::"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_clean("stderr", &log);
    for (i, r) in mock.requests().iter().enumerate() {
        assert_clean(&format!("request {i}"), &r.raw_body);
    }
    // Every file runner wrote: transcript, result.json, JUnit, the step summary, the patch,
    // spill files.
    let files = files_under(out.path());
    let patch = files
        .iter()
        .find(|p| p.extension().is_some_and(|e| e == "patch"))
        .expect("a patch");
    let patch_text = std::fs::read_to_string(patch).unwrap();
    assert!(
        patch_text.contains("+++ b/deploy/token.txt")
            && patch_text.contains("+[REDACTED:DEPLOY_TOKEN]"),
        "{patch_text}"
    );
    let spill = files
        .iter()
        .find(|p| {
            p.to_string_lossy().contains("tool-results") && p.to_string_lossy().ends_with(".stdout")
        })
        .unwrap_or_else(|| panic!("no spill file in {files:?}"));
    let spilled = std::fs::read_to_string(spill).unwrap();
    assert!(
        spilled.contains("\n[REDACTED:DEPLOY_TOKEN]\n"),
        "{}",
        spilled.len()
    );
    for name in ["result.json", "transcript.jsonl", "junit.xml", "summary.md"] {
        assert!(
            files
                .iter()
                .any(|p| p.file_name().is_some_and(|n| n == name)),
            "no {name} in {files:?}"
        );
    }
    for f in files.iter().filter(|f| !f.starts_with(&keys)) {
        let text = String::from_utf8_lossy(&std::fs::read(f).unwrap()).into_owned();
        assert_clean(&f.display().to_string(), &text);
    }
    // The branch commit holds the redacted file and nothing else of the secret.
    let shown = repo.git(&["log", "-p", "runner/leak"]);
    assert!(shown.contains("+[REDACTED:DEPLOY_TOKEN]"), "{shown}");
    assert_clean("the branch", &shown);
    assert_eq!(
        repo.git(&["show", "runner/leak:deploy/token.txt"]),
        "[REDACTED:DEPLOY_TOKEN]\n"
    );
    mock.assert_clean();
}
