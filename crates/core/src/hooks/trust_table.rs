//! Table tests of the trust classifier ([`super::trust::workdir_code`]): many spellings of the
//! same ways to run workdir code, and the pins that make a launcher safe.

use std::path::{Path, PathBuf};

use super::trust::{Start, WorkdirCode, workdir_code};

/// What a row expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Want {
    /// Not workdir code.
    Clean,
    /// Runs a file inside the workdir, or runs inside it.
    File,
    /// An unpinned launcher.
    Unpinned,
}
use Want::{Clean, File, Unpinned};

const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Shell-form rows: (command, expected).
#[rustfmt::skip]
const SHELL: &[(&str, Want)] = &[
    // Inline code and modules.
    ("python3 -c 'import json; print(1)'", Unpinned),
    ("python -c 'print(1)'", Unpinned),
    ("python3.12 -c 'print(1)'", Unpinned),
    ("/usr/bin/python3 -c 'print(1)'", Unpinned),
    ("/usr/bin/env python3 -c 'import json'", Unpinned),
    ("env -u HOME python3 -c 'import json'", Unpinned),
    ("timeout 5 python3 -c x", Unpinned),
    ("python3 -W ignore -c 'import json'", Unpinned),
    ("python3 -m json.tool", Unpinned),
    ("python3 -Im json.tool", Clean),
    ("python3 -I -c 'import json'", Clean),
    ("python3 -Ic 'import json'", Clean),
    ("/usr/bin/env python3 -I -c 'import json'", Clean),
    ("node -e 'require(\"x\")'", Unpinned),
    ("node --eval 'require(\"x\")'", Unpinned),
    ("node -p 1", Unpinned),
    ("node -r ./setup.js /opt/ci/x.js", File),
    ("ruby -e 'puts 1'", Unpinned),
    ("perl -MData::Dumper -e 1", Unpinned),
    // Through a shell.
    ("sh -c 'npx foo'", Unpinned),
    ("bash -c \"python3 -c 'import json'\"", Unpinned),
    ("jq -r .x | python3 -c 'import sys'", Unpinned),
    ("echo ok && npx -y cowsay", Unpinned),
    // npm-style package runners.
    ("npx foo", Unpinned),
    ("npx -y pkg", Unpinned),
    ("npx -y pkg@latest", Unpinned),
    ("npx -y pkg@^1.2.3", Unpinned),
    ("npx -y pkg@1.2", Unpinned),
    ("npx -y pkg@1.2.3", Clean),
    ("npx --yes @scope/server@2025.4.8", Clean),
    ("npx -y @scope/server", Unpinned),
    ("npx --package=pkg@1.2.3 -- tool --flag", Clean),
    ("npx -p pkg@1.2.3 -p other tool", Unpinned),
    ("npx -c 'tool' -p pkg@1.2.3", Unpinned),
    ("npx -y git+https://example.com/x.git", Unpinned),
    ("npx /opt/tools/pkg", Clean),
    ("npm exec -- pkg", Unpinned),
    ("npm exec -- pkg@1.2.3", Clean),
    ("npm exec --package=pkg@1.2.3 -- tool", Clean),
    ("npm x pkg", Unpinned),
    ("npm run lint", Unpinned),
    ("npm test", Unpinned),
    ("npm ci", Unpinned),
    ("pnpm dlx pkg", Unpinned),
    ("pnpm dlx pkg@1.2.3", Clean),
    ("pnpm exec eslint", Unpinned),
    ("pnpm lint", Unpinned),
    ("yarn dlx pkg@1.2.3", Clean),
    ("yarn dlx pkg", Unpinned),
    ("yarn lint", Unpinned),
    ("bunx pkg", Unpinned),
    ("bunx pkg@1.2.3", Clean),
    ("bun run build", Unpinned),
    // Python package and project runners.
    ("uvx ruff", Unpinned),
    ("uvx ruff==0.5.0 check", Clean),
    ("uvx --from ruff==0.5.0 ruff check", Clean),
    ("uvx --from ruff ruff", Unpinned),
    ("uv tool run ruff==0.5.0", Clean),
    ("uv run pytest", Unpinned),
    ("pipx run black==24.1.0", Clean),
    ("pipx run black", Unpinned),
    ("poetry run pytest", Unpinned),
    ("pipenv run x", Unpinned),
    // Other project runners.
    ("bundle exec rake", Unpinned),
    ("go run ./cmd/x", File),
    ("go run .", Unpinned),
    ("go run example.com/tool@v1.2.3", Clean),
    ("go run example.com/tool@latest", Unpinned),
    ("cargo run", Unpinned),
    ("cargo test --quiet", Unpinned),
    ("make lint", Unpinned),
    // Files inside the workdir.
    ("node ./x.js", File),
    ("node tools/x.js", File),
    ("bash hooks/x.sh", File),
    ("./scripts/check.sh", File),
    ("python3 guard.py", File),
    ("\"$CLAUDE_PROJECT_DIR\"/scripts/check.sh", File),
    // What is not workdir code.
    ("jq -r .tool_name", Clean),
    ("echo hi", Clean),
    ("/opt/ci/notify.sh", Clean),
    ("node /opt/ci/x.js", Clean),
    ("python3 /opt/ci/guard.py", Clean),
    ("cat > /tmp/out.json", Clean),
    ("grep -q x README.md", Clean),
];

fn workdir() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let w = d.path().canonicalize().unwrap();
    std::fs::create_dir_all(w.join("scripts")).unwrap();
    std::fs::create_dir_all(w.join("node_modules/.bin")).unwrap();
    std::fs::create_dir_all(w.join("cmd/x")).unwrap();
    std::fs::write(w.join("scripts/check.sh"), "x").unwrap();
    std::fs::write(w.join("guard.py"), "x").unwrap();
    std::fs::write(w.join("node_modules/.bin/jq"), "x").unwrap();
    (d, w)
}

fn classify(
    command: &str,
    args: Option<&[String]>,
    cwd: Option<&Path>,
    env: &[(String, String)],
    path: &str,
    w: &Path,
) -> Want {
    let start = Start {
        command,
        args,
        cwd,
        env,
        path: Some(path),
    };
    match workdir_code(&start, w) {
        None => Clean,
        Some(WorkdirCode::File(_)) => File,
        Some(WorkdirCode::Unpinned(_)) => Unpinned,
    }
}

#[test]
fn shell_commands_are_classified() {
    let (_d, w) = workdir();
    let mut wrong = Vec::new();
    for (cmd, want) in SHELL {
        let got = classify(cmd, None, None, &[], SYSTEM_PATH, &w);
        if got != *want {
            wrong.push(format!("{cmd}: want {want:?}, got {got:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn exec_form_is_classified_like_the_shell_form() {
    let (_d, w) = workdir();
    let words = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    #[rustfmt::skip]
    let rows: &[(&str, &[&str], Want)] = &[
        ("/usr/bin/env", &["python3", "-c", "import json"], Unpinned),
        ("python3", &["-I", "-c", "import json"], Clean),
        ("sh", &["-c", "npx foo"], Unpinned),
        ("npx", &["-y", "@modelcontextprotocol/server-github"], Unpinned),
        ("npx", &["-y", "@modelcontextprotocol/server-github@2025.4.8"], Clean),
        ("npm", &["exec", "--", "pkg"], Unpinned),
        ("node", &["./x.js"], File),
        ("bash", &["hooks/x.sh"], File),
        ("uvx", &["mcp-server-fetch==2025.1.17"], Clean),
        ("/opt/mcp/server", &["--stdio"], Clean),
    ];
    for (cmd, args, want) in rows {
        let a = words(args);
        assert_eq!(
            classify(cmd, Some(&a), None, &[], SYSTEM_PATH, &w),
            *want,
            "{cmd} {args:?}"
        );
    }
}

#[test]
fn a_pin_holds_only_outside_the_workdir() {
    let (_d, w) = workdir();
    let inside = w.join("scripts");
    for cmd in ["npx -y pkg@1.2.3", "python3 -I -c 'import json'", "jq ."] {
        assert_eq!(
            classify(cmd, None, Some(&inside), &[], SYSTEM_PATH, &w),
            File,
            "{cmd}"
        );
        assert_eq!(
            classify(cmd, None, Some(Path::new("/opt")), &[], SYSTEM_PATH, &w),
            Clean,
            "{cmd}"
        );
    }
}

#[test]
fn programs_resolve_through_path_as_the_os_does() {
    let (_d, w) = workdir();
    let bin = w.join("node_modules/.bin");
    let into = format!("{}:{SYSTEM_PATH}", bin.display());
    // `jq` is found first in the workdir's node_modules/.bin.
    assert_eq!(classify("jq .", None, None, &[], &into, &w), File);
    // A relative or empty entry before the program's directory: the working directory decides.
    for path in [
        format!(".:{SYSTEM_PATH}"),
        format!(":{SYSTEM_PATH}"),
        format!("node_modules/.bin:{SYSTEM_PATH}"),
    ] {
        assert_eq!(classify("jq .", None, None, &[], &path, &w), File, "{path}");
    }
    // After the program is found outside, later entries do not matter; builtins use no PATH.
    let after = format!("{SYSTEM_PATH}:{}", bin.display());
    if Path::new("/usr/bin/env").is_file() {
        assert_eq!(classify("env", None, None, &[], &after, &w), Clean);
    }
    assert_eq!(classify("echo hi", None, None, &[], &into, &w), Clean);
}

#[test]
fn code_variables_set_into_the_workdir_are_workdir_code() {
    let (_d, w) = workdir();
    let env = |k: &str, v: String| vec![(k.to_string(), v)];
    let cmd = "/opt/mcp/server";
    for (k, v) in [
        ("PYTHONPATH", w.display().to_string()),
        ("NODE_OPTIONS", format!("--require {}/x.js", w.display())),
        ("NODE_PATH", "node_modules".to_string()),
        ("LD_PRELOAD", format!("{}/x.so", w.display())),
    ] {
        assert_eq!(
            classify(cmd, None, None, &env(k, v.clone()), SYSTEM_PATH, &w),
            File,
            "{k}={v}"
        );
    }
    let ok = env("NODE_OPTIONS", "--max-old-space-size=4096".to_string());
    assert_eq!(classify(cmd, None, None, &ok, SYSTEM_PATH, &w), Clean);
}
