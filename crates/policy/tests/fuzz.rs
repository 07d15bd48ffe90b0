//! Fuzzing of the permission engine alone, as a property test: random command lines (made of
//! programs, arguments, operators and redirections, and raw printable text) under random rules
//! and modes. The decision never panics, and two spellings bash reads as the same command
//! (plain words quoted or not, spaces doubled) decide alike. `PROPTEST_CASES` sets the number
//! of cases (default 500; `.ci/run` runs more).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    unreachable_pub
)]

use proptest::prelude::*;

use runner_policy::{Decision, PermissionMode};

mod support;
use support::Fixture;

thread_local! {
    static FX: Fixture = Fixture::new();
}

const PROGRAMS: &[&str] = &[
    "ls", "cat", "git", "rm", "echo", "grep", "sed", "find", "curl", "npm", "cargo", "python3",
    "touch", "mkdir", "cp", "mv", "tee", "xargs", "env", "sh", "bash", "timeout", "head",
];

const ARGS: &[&str] = &[
    "-r",
    "-f",
    "-n",
    "-i",
    "-la",
    "--",
    "push",
    "origin",
    "main",
    "status",
    "log",
    "test",
    "build",
    "install",
    ".",
    "src",
    "README.md",
    "out.txt",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    "*.rs",
    "s/a/b/",
    "x",
    "1",
    "-c",
    "$HOME",
    "$(pwd)",
    "-exec",
    "{}",
    "\\;",
    "-delete",
];

const OPERATORS: &[&str] = &[" && ", " || ", "; ", " | ", "\n", " & "];

const REDIRECTIONS: &[&str] = &["", "", "", " > out.txt", " 2>&1", " < README.md", " >> log"];

const RULES: &[&str] = &[
    "Bash(git:*)",
    "Bash(git push:*)",
    "Bash(rm:*)",
    "Bash(ls:*)",
    "Bash(cat:*)",
    "Bash(cat README.md)",
    "Bash(npm test)",
    "Bash(cargo:*)",
    "Bash(echo:*)",
    "Bash(curl:*)",
    "Bash(*)",
    "Bash",
    "Read",
    "Read(./**)",
    "Read(~/.ssh/**)",
    "Edit(src/**)",
    "Write",
    "Write(out.txt)",
];

fn mode() -> impl Strategy<Value = PermissionMode> {
    prop_oneof![
        Just(PermissionMode::Default),
        Just(PermissionMode::AcceptEdits),
        Just(PermissionMode::Plan),
        Just(PermissionMode::DontAsk),
        Just(PermissionMode::BypassPermissions),
    ]
}

fn rules() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(prop::sample::select(RULES), 0..4)
        .prop_map(|r| r.into_iter().map(str::to_string).collect())
}

/// One simple command: a program, its arguments and a redirection, as words.
fn simple() -> impl Strategy<Value = (Vec<&'static str>, &'static str)> {
    (
        prop::sample::select(PROGRAMS),
        prop::collection::vec(prop::sample::select(ARGS), 0..4),
        prop::sample::select(REDIRECTIONS),
    )
        .prop_map(|(p, args, r)| {
            let mut words = vec![p];
            words.extend(args);
            (words, r)
        })
}

/// A command line: simple commands joined by operators.
type Line = Vec<((Vec<&'static str>, &'static str), &'static str)>;

fn line() -> impl Strategy<Value = Line> {
    prop::collection::vec((simple(), prop::sample::select(OPERATORS)), 1..4)
}

/// Whether quoting `word` leaves its meaning alone: no expansion, glob or escape in it.
fn plain(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('~')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
}

/// The line spelled out: each plain word quoted as `quote` says (0: bare, 1: single quotes,
/// 2: double quotes, 3: half quoted), with `gap` between words.
fn spell(line: &Line, quote: &[u8], gap: &str) -> String {
    let mut out = String::new();
    let mut k = 0;
    for (i, ((words, redirection), op)) in line.iter().enumerate() {
        for (j, w) in words.iter().enumerate() {
            if j > 0 {
                out.push_str(gap);
            }
            let q = quote.get(k % quote.len().max(1)).copied().unwrap_or(0);
            k += 1;
            match q {
                1 if plain(w) => out.push_str(&format!("'{w}'")),
                2 if plain(w) => out.push_str(&format!("\"{w}\"")),
                3 if plain(w) && w.len() > 1 => out.push_str(&format!("{}'{}'", &w[..1], &w[1..])),
                _ => out.push_str(w),
            }
        }
        out.push_str(redirection);
        if i + 1 < line.len() {
            out.push_str(op);
        }
    }
    out
}

/// What two decisions must agree on: allowed or not, and with what scope.
fn verdict(d: &Decision) -> (bool, Option<runner_policy::Scope>) {
    (d.is_allow(), d.is_allow().then(|| d.scope()))
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Any printable text, under any rules and mode, gets a decision (no panic).
    #[test]
    fn any_text_gets_a_decision(
        cmd in "[ -~\n]{0,120}",
        mode in mode(),
        allow in rules(),
        deny in rules(),
    ) {
        let d = FX.with(|fx| fx.try_decide(mode, &allow, &deny, &cmd));
        if let Some(d) = d {
            prop_assert!(!d.reason().is_empty(), "{cmd:?}: a decision without a reason");
        }
    }

    /// A command line made of real programs gets a decision, and the same line spelled
    /// another way bash reads alike (quoted plain words, doubled spaces) gets the same one.
    #[test]
    fn equivalent_spellings_decide_alike(
        line in line(),
        quote in prop::collection::vec(0u8..4, 1..6),
        mode in mode(),
        allow in rules(),
        deny in rules(),
    ) {
        let bare = spell(&line, &[0], " ");
        let other = spell(&line, &quote, "  ");
        let (a, b) = FX.with(|fx| {
            (fx.try_decide(mode, &allow, &deny, &bare), fx.try_decide(mode, &allow, &deny, &other))
        });
        if let (Some(a), Some(b)) = (a, b) {
            prop_assert_eq!(
                verdict(&a),
                verdict(&b),
                "{:?} decided {:?} ({}), but {:?} decided {:?} ({})",
                bare, verdict(&a), a.reason(), other, verdict(&b), b.reason()
            );
        }
    }
}
