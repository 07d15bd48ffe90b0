//! Flags of Claude Code (`claude -p`) and Codex (`codex exec`) that runner does not take, each
//! with what to use instead; and `runner -p ...` without a subcommand, which means `runner exec
//! -p ...` as `claude -p` does. Checked before clap parses, so the error names the replacement
//! instead of a similarly spelled runner flag.

use std::ffi::OsString;

/// A flag runner does not take and what to use instead. `flag` is matched exactly, also as
/// `flag=VALUE`.
#[derive(Debug, Clone, Copy)]
pub struct ForeignFlag {
    /// The flag as the other tool spells it.
    pub flag: &'static str,
    /// The tool it comes from.
    pub from: &'static str,
    /// What to use with runner.
    pub instead: &'static str,
}

/// Every flag of Claude Code and Codex that runner refuses with a pointer (the mapping table of
/// the book's CLI chapter).
pub const FOREIGN_FLAGS: &[ForeignFlag] = &[
    ForeignFlag {
        flag: "--input-format",
        from: "Claude Code",
        instead: "runner reads the prompt as text: -p TEXT, or -p - to read it from stdin",
    },
    ForeignFlag {
        flag: "--json-schema",
        from: "Claude Code",
        instead: "--output-schema FILE (the JSON Schema in a file; the answer is reported as structured_output)",
    },
    ForeignFlag {
        flag: "--include-partial-messages",
        from: "Claude Code",
        instead: "--output-format stream-json (whole messages; partial messages are not sent)",
    },
    ForeignFlag {
        flag: "--replay-user-messages",
        from: "Claude Code",
        instead: "nothing: runner takes no messages on stdin, so none are replayed",
    },
    ForeignFlag {
        flag: "--session-id",
        from: "Claude Code",
        instead: "nothing: each run gets its own session id; continue one with `runner resume SESSION_ID`",
    },
    ForeignFlag {
        flag: "--fork-session",
        from: "Claude Code",
        instead: "`runner resume` continues the session in place; copy its transcript to fork it",
    },
    ForeignFlag {
        flag: "--strict-mcp-config",
        from: "Claude Code",
        instead: "nothing: runner never reads .mcp.json from the workdir, only --mcp-config FILE and a spec's mcp_servers",
    },
    ForeignFlag {
        flag: "--permission-prompt-tool",
        from: "Claude Code",
        instead: "rules: runner never asks (--allowed-tools, --disallowed-tools, --permission-mode)",
    },
    ForeignFlag {
        flag: "--setting-sources",
        from: "Claude Code",
        instead: "--settings FILE (settings in the workdir are never read)",
    },
    ForeignFlag {
        flag: "--max-thinking-tokens",
        from: "Claude Code",
        instead: "a task spec's thinking_budget_tokens",
    },
    ForeignFlag {
        flag: "--agents",
        from: "Claude Code",
        instead: "a task spec per agent (runner exec tasks/ --jobs N runs them)",
    },
    ForeignFlag {
        flag: "--debug",
        from: "Claude Code",
        instead: "-v or -vv (RUNNER_LOG_FORMAT=json for JSON log lines)",
    },
    ForeignFlag {
        flag: "--ide",
        from: "Claude Code",
        instead: "nothing: runner runs without an IDE",
    },
    ForeignFlag {
        flag: "--full-auto",
        from: "Codex",
        instead: "--permission-mode acceptEdits (commands run sandboxed by default: --sandbox auto)",
    },
    ForeignFlag {
        flag: "--dangerously-bypass-approvals-and-sandbox",
        from: "Codex",
        instead: "--dangerously-skip-permissions --sandbox off",
    },
    ForeignFlag {
        flag: "--yolo",
        from: "Codex",
        instead: "--dangerously-skip-permissions --sandbox off",
    },
    ForeignFlag {
        flag: "--ask-for-approval",
        from: "Codex",
        instead: "--permission-mode MODE with --allowed-tools rules: runner never asks",
    },
    ForeignFlag {
        flag: "-a",
        from: "Codex",
        instead: "--permission-mode MODE with --allowed-tools rules: runner never asks",
    },
    ForeignFlag {
        flag: "--skip-git-repo-check",
        from: "Codex",
        instead: "nothing: runner runs outside a git repository too",
    },
    ForeignFlag {
        flag: "--config",
        from: "Codex",
        instead: "a task spec (runner schema lists its fields) or --settings FILE",
    },
    ForeignFlag {
        flag: "--profile",
        from: "Codex",
        instead: "a task spec file per setup",
    },
    ForeignFlag {
        flag: "--oss",
        from: "Codex",
        instead: "--provider openai with OPENAI_BASE_URL set to the local server",
    },
    ForeignFlag {
        flag: "--image",
        from: "Codex",
        instead: "nothing: runner sends no images",
    },
    ForeignFlag {
        flag: "--output-last-message",
        from: "Codex",
        instead: "the text output: `runner -p ... > FILE` (stdout carries the final answer); --output-file FILE for structured output",
    },
    ForeignFlag {
        flag: "--color",
        from: "Codex",
        instead: "NO_COLOR=1 to turn colour off",
    },
    ForeignFlag {
        flag: "--ephemeral",
        from: "Codex",
        instead: "--transcript-dir DIR (transcripts are always written)",
    },
];

/// The first argument of `args` (program name excluded) that is a foreign flag, as an error
/// message naming what to use instead. Arguments after `--` are values, not flags.
pub fn check(args: &[OsString]) -> Option<String> {
    let mut prev_takes_value = false;
    for a in args.iter().skip(1) {
        let Some(a) = a.to_str() else { continue };
        if a == "--" {
            return None;
        }
        // The value of -p/--append-system-prompt and the like may look like anything.
        if prev_takes_value {
            prev_takes_value = false;
            continue;
        }
        let name = a.split_once('=').map_or(a, |(n, _)| n);
        if let Some(f) = FOREIGN_FLAGS.iter().find(|f| f.flag == name) {
            return Some(format!(
                "runner does not take {}'s `{}`; use {}",
                f.from, f.flag, f.instead
            ));
        }
        prev_takes_value = takes_text_value(a);
    }
    None
}

/// Whether `arg` is a runner flag whose next argument is free text.
fn takes_text_value(arg: &str) -> bool {
    matches!(
        arg,
        "-p" | "--prompt" | "--print" | "--system-prompt" | "--append-system-prompt" | "--name"
    )
}

/// The subcommands: an argument list starting with none of them but with a flag is
/// `runner exec ...` (`runner -p "..."`).
const SUBCOMMANDS: &[&str] = &[
    "exec", "validate", "resume", "schema", "report", "init", "help",
];

/// `args` with `exec` inserted when no subcommand is given but a flag other than the global
/// ones (`-v`, `-q`, help, version) is: `runner -p hi` is `runner exec -p hi`.
pub fn with_default_command(mut args: Vec<OsString>) -> Vec<OsString> {
    let mut at = 1;
    while let Some(a) = args.get(at).and_then(|a| a.to_str()) {
        if is_global_flag(a) {
            at += 1;
            continue;
        }
        if SUBCOMMANDS.contains(&a)
            || !a.starts_with('-')
            || matches!(a, "-h" | "--help" | "-V" | "--version")
        {
            return args;
        }
        args.insert(at, OsString::from("exec"));
        return args;
    }
    args
}

/// `-v`, `-vv`, `--verbose`, `-q`, `--quiet`.
fn is_global_flag(a: &str) -> bool {
    matches!(a, "--verbose" | "--quiet" | "-q")
        || (a.len() > 1 && a.starts_with('-') && a[1..].chars().all(|c| c == 'v'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn names_the_replacement() {
        let e = check(&os(&["runner", "exec", "-p", "hi", "--json-schema", "{}"])).unwrap();
        assert!(e.contains("--output-schema FILE"), "{e}");
        let e = check(&os(&["runner", "exec", "--input-format=stream-json"])).unwrap();
        assert!(e.contains("-p -"), "{e}");
        // A prompt that mentions a flag is text.
        assert!(check(&os(&["runner", "-p", "--json-schema", "x"])).is_none());
        assert!(check(&os(&["runner", "exec", "--", "--yolo"])).is_none());
    }

    #[test]
    fn flags_without_a_subcommand_are_exec() {
        assert_eq!(
            with_default_command(os(&["runner", "-p", "hi"])),
            os(&["runner", "exec", "-p", "hi"])
        );
        assert_eq!(
            with_default_command(os(&["runner", "-vv", "--model", "m", "-p", "hi"])),
            os(&["runner", "-vv", "exec", "--model", "m", "-p", "hi"])
        );
        for kept in [
            &["runner"][..],
            &["runner", "--help"],
            &["runner", "-V"],
            &["runner", "-q", "validate", "x"],
            &["runner", "exec", "-p", "hi"],
        ] {
            assert_eq!(with_default_command(os(kept)), os(kept));
        }
    }
}
