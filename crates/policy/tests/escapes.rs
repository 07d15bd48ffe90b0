//! One table per class of escape closed in the engine itself: each row is decided through the
//! whole policy against a workspace on disk (mode, allow rules, deny rules, command, allowed?).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    unreachable_pub
)]

use std::path::PathBuf;

use PermissionMode::{AcceptEdits as AE, BypassPermissions as BP, DontAsk as DA};
use runner_policy::roots::SessionRoots;
use runner_policy::{Access, Decision, PermissionMode, Policy, ToolCall};

type Row = (
    PermissionMode,
    &'static [&'static str],
    &'static [&'static str],
    &'static str,
    bool,
);

const NONE: &[&str] = &[];

struct Fixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    roots: SessionRoots,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let w = root.join("work");
    for (p, body) in [
        (".env", "KEY=1"),
        ("README.md", "hello"),
        ("notes.txt", "v"),
        ("a.txt", "a"),
        ("v.tar", ""),
        ("fix.diff", ""),
        ("timeout", "#!/bin/sh"),
        ("tools/sh", "#!/bin/sh"),
        ("src/main.rs", "fn main() {}"),
        (".git/HEAD", "ref: refs/heads/main\n"),
        (".git/config", "[core]\n\tbare = false\n"),
    ] {
        let p = w.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, body).unwrap();
    }
    for d in [".git/objects", ".git/refs/heads", "home", "outside"] {
        let base = if d.starts_with(".git") { &w } else { &root };
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    let roots = SessionRoots {
        spec_dir: w.clone(),
        repo_root: Some(w.clone()),
        workdir: w,
        additional_dirs: vec![],
        output_dir: root.join("out"),
        source_root: None,
    };
    Fixture {
        _dir: dir,
        root,
        roots,
    }
}

impl Fixture {
    fn decide(&self, mode: PermissionMode, allow: &[&str], deny: &[&str], cmd: &str) -> Decision {
        let s = |v: &[&str]| -> Vec<String> { v.iter().map(|s| s.to_string()).collect() };
        let policy = Policy::new(mode, &s(allow), &s(deny))
            .unwrap()
            .with_home(Some(self.root.join("home")));
        let cmd = cmd.replace("{W}", &self.roots.workdir.display().to_string());
        let access = Access::Exec(cmd);
        policy.decide(
            &ToolCall {
                tool: "Bash",
                access: &access,
                cwd: &self.roots.workdir,
            },
            &self.roots,
        )
    }
}

fn run(name: &str, rows: &[Row]) {
    let fx = fixture();
    let mut failures = Vec::new();
    for (i, (mode, allow, deny, cmd, expect)) in rows.iter().enumerate() {
        let d = fx.decide(*mode, allow, deny, cmd);
        if d.is_allow() != *expect {
            failures.push(format!(
                "{name} row {i}: {mode:?} allow={allow:?} deny={deny:?} {cmd:?}: expected {}, got {d:?}",
                if *expect { "allow" } else { "deny" },
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[rustfmt::skip]
const PROGRAMS_BY_PATH: &[Row] = &[
    (DA, NONE, NONE, "./timeout 5 ls", false),
    (DA, NONE, NONE, "./bash -c 'ls'", false),
    (DA, NONE, NONE, "tools/sh -c 'ls'", false),
    (DA, NONE, NONE, "{W}/timeout 5 ls", false),
    (DA, NONE, NONE, "/tmp/bash -c ls", false),
    (DA, NONE, NONE, "/usr/bin/../..{W}/timeout 5 ls", false),
    (DA, NONE, NONE, "./ls", false),
    (DA, NONE, NONE, "tools/cat README.md", false),
    (DA, &["Bash(ls:*)"], NONE, "./timeout 5 ls", false),
    (DA, &["Bash(timeout:*)", "Bash(ls:*)"], NONE, "./timeout 5 ls", false),
    (BP, NONE, &["Bash(rm:*)"], "./rm -rf src", false),
    (DA, &["Bash(./timeout:*)"], NONE, "./timeout 5 ls", true),
    (DA, &["Bash(tools/sh:*)"], NONE, "tools/sh -c 'ls'", true),
    (DA, NONE, NONE, "/usr/bin/timeout 5 ls", true),
    (DA, NONE, NONE, "/bin/sh -c 'ls'", true),
    (DA, NONE, NONE, "timeout 5 ls", true),
];

#[test]
fn programs_by_path_are_the_files_they_name() {
    run("programs by path", PROGRAMS_BY_PATH);
}

#[rustfmt::skip]
const SH_IS_NOT_BASH: &[Row] = &[
    (DA, NONE, NONE, "sh -c \"echo \\$'\\\\'; touch x #\\\\''\"", false),
    (BP, NONE, NONE, "sh -c \"echo \\$'\\\\'; touch x #\\\\''\"", false),
    (BP, NONE, NONE, "dash -c \"echo \\$'\\\\'; touch x #\\\\''\"", false),
    (BP, NONE, NONE, "sh <<'EOF'\necho $'\\'; touch x #\\''\nEOF", false),
    (BP, NONE, NONE, "watch \"echo \\$'\\\\'; touch x #\\\\''\"", false),
    (BP, NONE, NONE, "su -s /bin/sh -c \"echo \\$'a'\" root", false),
    (BP, NONE, NONE, "sh -c 'echo $\"x\"'", false),
    (BP, NONE, NONE, "sh -c '[[ -f x ]] && ls'", false),
    (BP, NONE, NONE, "sh -c 'a=(1 2); echo ${a[0]}'", false),
    (BP, NONE, NONE, "sh -c 'function f { ls; }'", false),
    (BP, NONE, NONE, "sh -c 'cat <(ls)'", false),
    (BP, NONE, NONE, "sh -c 'echo {a,b}'", false),
    (BP, NONE, NONE, "sh -c 'ls &> out'", false),
    (BP, NONE, NONE, "sh -c 'ls |& cat'", false),
    (BP, NONE, NONE, "sh -c 'cat <<< x'", false),
    (BP, NONE, NONE, "sh -c 'echo ${x//a/b}'", false),
    (BP, NONE, NONE, "flock /tmp/l -c \"echo \\$'x'\"", false),
    (BP, NONE, NONE, "script -qc \"echo \\$'x'\" /dev/null", false),
    (BP, &["Bash(rm:*)"], &["Bash(rm:*)"], "ash -c 'rm -rf src'", false),
    (DA, NONE, NONE, "sh -c 'cat README.md'", true),
    (DA, NONE, NONE, "sh -c 'ls -la && echo \"$x\" | grep a'", true),
    (DA, NONE, NONE, "dash -c 'cat README.md'", true),
    (DA, NONE, NONE, "sh -c \"echo '\\$'\"", true),
    (DA, NONE, NONE, "bash -c \"echo \\$'x'\"", true),
    (DA, NONE, NONE, "sh <<'EOF'\nls\nEOF", true),
];

#[test]
fn sh_scripts_are_posix_or_refused() {
    run("sh is not bash", SH_IS_NOT_BASH);
}

const NETRC_DENIED: &[&str] = &["Read(~/.netrc)", "Read(./.env)"];

#[rustfmt::skip]
const CHANGES_UNDER_THE_DECISION: &[Row] = &[
    (BP, NONE, NETRC_DENIED, "ln -s ../home h && cat h/.netrc", false),
    (DA, &["Bash(ln:*)"], NONE, "ln -s ../home h && cat h/.netrc", false),
    (DA, &["Bash(tar -x:*)"], NONE, "tar -xf v.tar && cat v/cfg/passwd", false),
    (BP, NONE, NETRC_DENIED, "tar -xf v.tar -C build && cat build/x", false),
    (DA, &["Edit"], NONE, "echo > --pre=sh; rg -l . *", false),
    (DA, &["Edit", "Bash(touch:*)"], NONE, "touch ./--pre=sh && rg -l . *", false),
    (AE, &["Bash(tar -x:*)"], NONE, "tar -x -f v.tar -C build && echo x > build/h/pre-commit", false),
    (AE, &["Bash(git apply:*)"], NONE, "git apply fix.diff && echo x > src/x", false),
    (DA, &["Bash(patch:*)"], NONE, "patch -p1 < fix.diff && cat src/main.rs", false),
    (DA, &["Bash(unzip:*)"], NONE, "unzip a.zip; cat a/b", false),
    (DA, &["Bash(cp:*)"], NONE, "cp -s ../home/x y && cat y", false),
    (DA, &["Bash(mkdir:*)"], NONE, "mkdir ./--pre=sh && rg -l . *", false),
    (DA, &["Bash(ln:*)"], NONE, "for i in 1 2; do cat h/x; ln -s ../home h; done", false),
    (DA, &["Bash(ln:*)"], NONE, "cat h/x & ln -s ../home h", false),
    (DA, &["Bash(ln:*)", "Bash(cat:*)"], NONE, "ln -s ../home h && cat h/x", true),
    (AE, NONE, NONE, "mkdir -p out && echo x > out/a.txt", true),
    (DA, &["Bash(tar -x:*)"], NONE, "tar -x -f v.tar && echo done", true),
    (DA, &["Bash(cargo build:*)"], NONE, "cargo build && ls target", true),
    (DA, &["Edit"], NONE, "echo x > out.txt && cat README.md", true),
];

#[test]
fn paths_made_earlier_in_the_command_are_unknown() {
    run("changes under the decision", CHANGES_UNDER_THE_DECISION);
}

#[test]
fn git_aliases_in_the_configuration_are_shell_commands() {
    let fx = fixture();
    std::fs::write(
        fx.roots.workdir.join(".git/config"),
        "[core]\n\tbare = false\n[alias]\n\tc = !rm -rf src\n\tl = \"!ls -la\"\n\tp = push\n\tloop = !git loop\n",
    )
    .unwrap();
    for (allow, deny, cmd, expect) in [
        (NONE, &["Bash(rm:*)"][..], "git c", false),
        (&["Bash(git:*)"][..], NONE, "git c", false),
        (&["Bash(git:*)", "Bash(rm:*)"][..], NONE, "git c", true),
        (
            &["Bash(git:*)"][..],
            &["Bash(git push:*)"][..],
            "git p",
            false,
        ),
        (&["Bash(git:*)"][..], NONE, "git l", true),
        (&["Bash(git:*)"][..], NONE, "git loop", false),
    ] {
        let d = fx.decide(DA, allow, deny, cmd);
        assert_eq!(d.is_allow(), expect, "{allow:?} {deny:?} {cmd}: {d:?}");
    }
}

#[rustfmt::skip]
const DENY_EQUIVALENTS: &[Row] = &[
    (BP, NONE, &["Bash(git push:*)"], "git send-pack origin main", false),
    (BP, NONE, &["Bash(git push:*)"], "git http-push x", false),
    (BP, NONE, &["Bash(gh pr merge:*)"], "gh api -X PUT repos/o/r/pulls/1/merge", false),
    (BP, NONE, &["Bash(gh pr merge:*)"], "gh api --method=PUT repos/o/r/pulls/1/merge", false),
    (BP, NONE, &["Bash(gh pr merge:*)"], "gh api graphql -f query='mutation{mergePullRequest}'", false),
    (BP, NONE, &["Bash(docker push:*)"], "docker buildx build --push -t x .", false),
    (BP, NONE, &["Bash(docker push:*)"], "docker buildx build --output type=registry .", false),
    (BP, NONE, &["Bash(docker push:*)"], "docker compose push", false),
    (BP, NONE, &["Bash(docker push:*)"], "docker-compose push web", false),
    (BP, NONE, &["Bash(npm publish:*)"], "pnpm publish", false),
    (BP, NONE, &["Bash(npm publish:*)"], "yarn npm publish", false),
    (BP, NONE, &["Bash(rm:*)"], "bash -o pipefail -c 'rm -rf src'", false),
    (BP, NONE, &["Bash(rm:*)"], "bash -c -- 'rm -rf src'", false),
    (BP, NONE, &["Bash(rm:*)"], "sh -c +e 'rm -rf src'", false),
    (BP, NONE, &["Bash(rm:*)"], "bash -ec 'rm -rf src'", false),
    (BP, NONE, &["Bash(rm:*)"], "bash +o posix -e -c 'rm -rf src'", false),
    (BP, NONE, &["Bash(rm:*)"], "bash -O extglob -c 'rm -rf src'", false),
    (BP, NONE, &["Bash(rm:*)"], "bash --norc -c 'rm -rf src'", false),
    (BP, NONE, &["Bash(rm:*)"], "setarch x86_64 rm -rf src", false),
    (BP, NONE, &["Bash(rm:*)"], "setarch x86_64 -R rm -rf src", false),
    (BP, NONE, &["Bash(rm:*)"], "linux32 rm -rf src", false),
    (BP, NONE, &["Bash(rm:*)"], "x86_64 rm -rf src", false),
    (BP, NONE, &["Bash(rm:*)"], "i386 rm -rf src", false),
    (BP, NONE, &["Bash(rm:*)"], "/lib64/ld-linux-x86-64.so.2 /bin/rm -rf src", false),
    (BP, NONE, &["Bash(rm:*)"], "ld.so --library-path /x /bin/rm -rf src", false),
    (BP, NONE, &["Bash(rm:*)"], "git -c alias.c='!rm -rf src' c", false),
    (BP, NONE, &["Bash(rm:*)"], "git -c Alias.c='!f() { rm -rf src; }; f' c", false),
    (BP, NONE, &["Bash(rm:*)"], "find . -name x -delete", false),
    (BP, NONE, &["Bash(rm:*)"], "unlink a.txt", false),
    (DA, &["Bash(ls:*)"], NONE, "setarch x86_64 ls", false),
    (DA, &["Bash(setarch:*)", "Bash(ls:*)"], NONE, "setarch x86_64 ls", true),
    (BP, NONE, &["Bash(gh pr merge:*)"], "gh api repos/o/r/pulls", true),
    (BP, NONE, &["Bash(docker push:*)"], "docker buildx build -t x .", true),
    (BP, NONE, &["Bash(git push:*)"], "git fetch origin", true),
    (DA, NONE, &["Bash(rm:*)"], "bash -o pipefail -c 'ls | head'", true),
    (DA, NONE, NONE, "bash -ec 'ls'", true),
];

#[test]
fn deny_rules_cover_equivalent_commands() {
    run("deny equivalents", DENY_EQUIVALENTS);
}

const ENV_DENIED: &[&str] = &["Read(./.env)"];

#[rustfmt::skip]
const OTHER_READERS: &[Row] = &[
    (DA, NONE, ENV_DENIED, "git show :0:.env", false),
    (DA, NONE, ENV_DENIED, "git show :.env", false),
    (DA, NONE, ENV_DENIED, "git show 'HEAD^{/fix: x}:.env'", false),
    (DA, NONE, ENV_DENIED, "git show HEAD", false),
    (DA, NONE, ENV_DENIED, "git show 1a2b3c", false),
    (DA, NONE, ENV_DENIED, "git log -p", false),
    (DA, NONE, ENV_DENIED, "git diff HEAD~1", false),
    (DA, NONE, ENV_DENIED, "git diff -- .", false),
    (BP, NONE, ENV_DENIED, "git archive HEAD | tar -xO", false),
    (BP, NONE, ENV_DENIED, "git cat-file -p HEAD:.env", false),
    (BP, NONE, ENV_DENIED, "git cat-file blob 1a2b3c", false),
    (BP, NONE, ENV_DENIED, "git format-patch -1", false),
    (DA, NONE, ENV_DENIED, "git grep KEY HEAD", false),
    (DA, &["Bash(cat:*)"], ENV_DENIED, "ls -A | xargs cat", false),
    (BP, NONE, ENV_DENIED, "ls -A | xargs cat", false),
    (BP, NONE, ENV_DENIED, "find . -exec head {} +", false),
    (DA, NONE, ENV_DENIED, "git show --stat HEAD", true),
    (DA, NONE, ENV_DENIED, "git log --oneline -5", true),
    (DA, NONE, ENV_DENIED, "git show HEAD:README.md", true),
    (DA, NONE, ENV_DENIED, "git diff -- src", true),
    (DA, NONE, ENV_DENIED, "git diff --stat", true),
    (DA, NONE, NONE, "git show HEAD", true),
    (BP, NONE, NONE, "ls -A | xargs cat", true),
];

#[test]
fn read_denials_cover_other_readers() {
    run("other readers", OTHER_READERS);
}

#[rustfmt::skip]
const AUTO_EXECUTED: &[Row] = &[
    (BP, NONE, NONE, "echo x > lefthook.json", false),
    (BP, NONE, NONE, "echo x > lefthook.toml", false),
    (BP, NONE, NONE, "echo x > mise.toml", false),
    (BP, NONE, NONE, "echo x > .mise.toml", false),
    (BP, NONE, NONE, "echo x > .tool-versions", false),
    (BP, NONE, NONE, "echo x > .pnpmfile.cjs", false),
    (BP, NONE, NONE, "echo x > .yarnrc.yml", false),
    (BP, NONE, NONE, "echo x > .npmrc", false),
    (BP, NONE, NONE, "echo x > .envrc", false),
    (BP, NONE, NONE, "echo x > rust-toolchain.toml", false),
    (BP, NONE, NONE, "echo x > .lintstagedrc.json", false),
    (BP, NONE, NONE, "echo x > .huskyrc", false),
    (BP, NONE, NONE, "echo x > devbox.json", false),
    (BP, NONE, NONE, "mkdir -p .vscode && echo x > .vscode/tasks.json", false),
    (BP, NONE, NONE, "cp a.txt .gitlab-ci.yml", false),
    (AE, NONE, NONE, "echo x > src/lefthook.json", false),
    (BP, &["Edit(./mise.toml)"], NONE, "echo x > mise.toml", true),
    (BP, NONE, NONE, "echo x > notes.txt", true),
];

#[test]
fn auto_executed_files_are_protected() {
    run("auto-executed files", AUTO_EXECUTED);
}

#[rustfmt::skip]
const INTEGER_VARIABLES: &[Row] = &[
    (BP, NONE, NONE, "read OPTIND <<< 'a[$(touch x)]'", false),
    (BP, NONE, NONE, "OPTIND='a[$(touch x)]'", false),
    (BP, NONE, NONE, "printf -v OPTIND %s 'a[$(touch x)]'", false),
    (BP, NONE, NONE, "for OPTIND in 'a[$(touch x)]'; do :; done", false),
    (BP, NONE, NONE, "read OPTERR < notes.txt", false),
    (BP, NONE, NONE, "read SECONDS < notes.txt", false),
    (BP, NONE, NONE, "read RANDOM < notes.txt", false),
    (BP, NONE, NONE, "read LINENO < notes.txt", false),
    (BP, NONE, NONE, "read HISTCMD < notes.txt", false),
    (BP, NONE, NONE, "read COLUMNS < notes.txt", false),
    (BP, NONE, NONE, "declare -i n; read n < notes.txt", false),
    (BP, NONE, NONE, "typeset -i n=1", false),
    (BP, NONE, NONE, "local -i n", false),
    (BP, NONE, NONE, "getopts ab opt", true),
    (BP, NONE, NONE, "read -r n < notes.txt", true),
];

#[test]
fn integer_variables_are_never_set() {
    run("integer variables", INTEGER_VARIABLES);
}

#[rustfmt::skip]
const BENIGN: &[Row] = &[
    (DA, &["Bash(npm test)"], NONE, "export CI=true && npm test", true),
    (DA, NONE, NONE, "read -r v < notes.txt", true),
    (DA, NONE, NONE, "command -v cargo", true),
    (DA, NONE, NONE, "uname -a && date -u +%F", true),
    (DA, NONE, NONE, "export out_dir=build", true),
    (DA, NONE, NONE, "type -t cargo && command -V git", true),
    (DA, NONE, NONE, "date -r README.md +%s", true),
    (DA, &["Bash(npm test)"], NONE, "export npm_config_script_shell=./x && npm test", false),
    (DA, NONE, NONE, "export PATH=/tmp", false),
    (DA, NONE, NONE, "date 0101000070", false),
    (DA, NONE, NONE, "command rm -rf src", false),
    (DA, NONE, NONE, "date -r ../outside/x", false),
];

#[test]
fn benign_commands_are_allowed() {
    run("benign", BENIGN);
}
