//! The file tools through the real binary under the sandbox's file rules: a scripted model
//! lists, searches, reads and writes what `sandbox.read_deny`, the credential locations and the
//! writable roots keep from confined commands; the tools keep it from the model too, with a
//! denial that names the rule.

use serde_json::{Value, json};

use crate::support::*;

fn spec(extra: &str) -> String {
    format!("name: access\nprompt: \"do it\"\nmodel: claude-sonnet-4-5\n{extra}")
}

/// The tool_result text of call `id` in request `i`.
fn result_of(mock: &MockAnthropic, i: usize, id: &str) -> String {
    mock.request(i)
        .tool_result_text(id)
        .unwrap_or_else(|| panic!("no result for {id}"))
}

fn denials(result: &Value) -> Vec<(String, String)> {
    result["permission_denials"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|d| {
                    (
                        d["tool_name"].as_str().unwrap_or_default().to_string(),
                        d["tool_use_id"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn glob_grep_and_read_keep_out_of_read_deny() {
    let repo = TestRepo::new();
    repo.write("notes/open.txt", "needle in the open\n");
    repo.write("notes/secret.txt", "needle TOKEN=s3cr3t-value\n");
    repo.write("vault/deep/key.txt", "needle vault-key-value\n");
    repo.commit_all("files");
    std::os::unix::fs::symlink(
        repo.path().join("notes/secret.txt"),
        repo.path().join("notes/alias.txt"),
    )
    .unwrap();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use("t_glob", "Glob", json!({"pattern": "**/*.txt"}))
            .tool_use(
                "t_grep",
                "Grep",
                json!({"pattern": "needle", "output_mode": "content"}),
            )
            .tool_use(
                "t_read",
                "Read",
                json!({"file_path": repo.path().join("notes/secret.txt")}),
            )
            .tool_use(
                "t_alias",
                "Read",
                json!({"file_path": repo.path().join("notes/alias.txt")}),
            )
            .tool_use(
                "t_open",
                "Read",
                json!({"file_path": repo.path().join("notes/open.txt")}),
            )
            .turn(),
        text_turn("done"),
    ]);
    let out = OutDir::new();
    let yaml = spec("sandbox:\n  read_deny: [notes/secret.txt, vault]\n");
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);

    let glob = result_of(&mock, 1, "t_glob");
    assert!(glob.contains("open.txt"), "{glob}");
    for hidden in ["secret.txt", "key.txt", "alias.txt"] {
        assert!(!glob.contains(hidden), "Glob listed {hidden}: {glob}");
    }
    let grep = result_of(&mock, 1, "t_grep");
    assert!(grep.contains("needle in the open"), "{grep}");
    for hidden in ["s3cr3t", "vault-key-value"] {
        assert!(!grep.contains(hidden), "Grep found {hidden}: {grep}");
    }
    for id in ["t_read", "t_alias"] {
        let read = result_of(&mock, 1, id);
        assert!(!read.contains("s3cr3t"), "{read}");
        assert!(read.contains("sandbox.read_deny"), "{read}");
    }
    assert!(result_of(&mock, 1, "t_open").contains("needle in the open"));

    let result = run.result();
    let d = denials(&result);
    assert!(d.contains(&("Read".into(), "t_read".into())), "{d:?}");
    assert!(d.contains(&("Read".into(), "t_alias".into())), "{d:?}");
    assert_eq!(d.len(), 2, "{d:?}");
    mock.assert_clean();
}

#[test]
fn a_read_rule_over_home_does_not_reach_credentials() {
    let repo = TestRepo::new();
    let out = OutDir::new();
    let home = out.path().join("home");
    std::fs::create_dir_all(home.join(".ssh")).unwrap();
    std::fs::create_dir_all(home.join(".aws")).unwrap();
    std::fs::write(home.join(".ssh/id_rsa"), "PRIVATE-KEY-BYTES\n").unwrap();
    std::fs::write(
        home.join(".aws/credentials"),
        "aws_secret_access_key=AKIAFAKE\n",
    )
    .unwrap();
    // A toolchain location stays readable; the rest of the home directory does not (a
    // credential on no list: `.pgpass`).
    std::fs::create_dir_all(home.join(".cache")).unwrap();
    std::fs::write(home.join(".cache/notes.txt"), "plain notes\n").unwrap();
    std::fs::write(home.join(".pgpass"), "*:*:*:ci:PGSECRET\n").unwrap();
    let mock =
        MockAnthropic::start(vec![
        Resp::new()
            .tool_use("t_key", "Read", json!({"file_path": home.join(".ssh/id_rsa")}))
            .tool_use("t_aws", "Read", json!({"file_path": home.join(".aws/credentials")}))
            .tool_use("t_notes", "Read", json!({"file_path": home.join(".cache/notes.txt")}))
            .tool_use("t_pgpass", "Read", json!({"file_path": home.join(".pgpass")}))
            .tool_use(
                "t_grep",
                "Grep",
                json!({"pattern": "AKIA|PRIVATE|PGSECRET|plain", "path": home, "output_mode": "content"}),
            )
            .turn(),
        text_turn("done"),
    ]);
    // `Read(~/**)` allows every file under the home directory, the search of the directory
    // itself needs its own rule.
    let yaml = spec(&format!(
        "permissions:\n  allow: [\"Read(~/**)\", \"Read(/{})\"]\n",
        home.display()
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out)
        .json()
        .env("HOME", &home)
        .arg(&spec)
        .run();
    run.expect_code(0);

    let key = result_of(&mock, 1, "t_key");
    assert!(!key.contains("PRIVATE-KEY"), "{key}");
    assert!(key.contains("~/.ssh"), "{key}");
    let aws = result_of(&mock, 1, "t_aws");
    assert!(!aws.contains("AKIAFAKE"), "{aws}");
    assert!(aws.contains("~/.aws"), "{aws}");
    // The rule itself works: a toolchain location is read, the rest of home is closed.
    assert!(result_of(&mock, 1, "t_notes").contains("plain notes"));
    let pgpass = result_of(&mock, 1, "t_pgpass");
    assert!(!pgpass.contains("PGSECRET"), "{pgpass}");
    assert!(pgpass.contains("closed"), "{pgpass}");
    // A search of the home directory itself is refused as a `ls ~` is: it is closed.
    let grep = result_of(&mock, 1, "t_grep");
    assert!(grep.contains("closed"), "{grep}");
    assert!(
        !grep.contains("AKIAFAKE") && !grep.contains("PRIVATE") && !grep.contains("PGSECRET"),
        "{grep}"
    );
    let d = denials(&run.result());
    assert!(d.contains(&("Read".into(), "t_key".into())), "{d:?}");
    assert!(d.contains(&("Read".into(), "t_aws".into())), "{d:?}");
    mock.assert_clean();
}

#[test]
fn write_stays_inside_the_writable_roots() {
    let repo = TestRepo::new();
    let out = OutDir::new();
    let outside = out.path().join("outside");
    let extra = out.path().join("extra");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&extra).unwrap();
    let mock = MockAnthropic::start(vec![
        Resp::new()
            .tool_use(
                "t_out",
                "Write",
                json!({"file_path": outside.join("planted.sh"), "content": "echo hi\n"}),
            )
            .tool_use(
                "t_extra",
                "Write",
                json!({"file_path": extra.join("ok.txt"), "content": "fine\n"}),
            )
            .tool_use(
                "t_in",
                "Write",
                json!({"file_path": repo.path().join("in.txt"), "content": "fine\n"}),
            )
            .turn(),
        text_turn("done"),
    ]);
    let yaml = spec(&format!(
        "permissions:\n  mode: acceptEdits\n  allow: [\"Edit(/{o}/**)\", \"Edit(/{e}/**)\"]\nsandbox:\n  write: [{e}]\n",
        o = outside.display(),
        e = extra.display()
    ));
    let spec = write_spec(repo.path(), &yaml);
    let run = exec(&mock, &repo, &out).json().arg(&spec).run();
    run.expect_code(0);

    let denied = result_of(&mock, 1, "t_out");
    assert!(denied.contains("writable roots"), "{denied}");
    assert!(!outside.join("planted.sh").exists());
    assert_eq!(
        std::fs::read_to_string(extra.join("ok.txt")).unwrap(),
        "fine\n"
    );
    assert_eq!(repo.read("in.txt"), "fine\n");
    let d = denials(&run.result());
    assert_eq!(d, vec![("Write".to_string(), "t_out".to_string())]);
    mock.assert_clean();
}
