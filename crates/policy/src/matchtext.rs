//! The texts deny and ask rules are matched against, for one simple command: the command with
//! and without each of its wrappers, with a path-qualified name reduced to its file name, with
//! leading options skipped (every way they could be read: `git -C d push`, `kubectl -n x
//! delete`, `cargo +nightly publish` are `git push`, `kubectl delete`, `cargo publish`), with
//! npm's subcommand aliases spelled out, and, when the subcommand may be an alias runner cannot
//! resolve (`git p` with `alias.p=push`), as just the program name followed by anything.
//! When in doubt, a deny rule matches.

use super::bash::SimpleCmd;
use super::word::ArgWord;
use super::{equivalents, git};

/// One text to match, and whether it is only a prefix (the rest is unknown: a dynamic word or
/// arguments runner cannot see).
pub type Candidate = (String, bool);

/// Most leading options whose reading is explored both ways (taking the next word as a value
/// or not); past that the program name alone is matched, followed by anything.
const MAX_AMBIGUOUS: usize = 6;

/// git's built-in commands: any other subcommand may be an alias.
pub const GIT_BUILTINS: &[&str] = &[
    "add",
    "am",
    "annotate",
    "apply",
    "archive",
    "bisect",
    "blame",
    "branch",
    "bugreport",
    "bundle",
    "cat-file",
    "check-attr",
    "check-ignore",
    "check-mailmap",
    "check-ref-format",
    "checkout",
    "checkout-index",
    "cherry",
    "cherry-pick",
    "citool",
    "clean",
    "clone",
    "column",
    "commit",
    "commit-graph",
    "commit-tree",
    "config",
    "count-objects",
    "credential",
    "describe",
    "diagnose",
    "diff",
    "diff-files",
    "diff-index",
    "diff-tree",
    "difftool",
    "fast-export",
    "fast-import",
    "fetch",
    "fetch-pack",
    "filter-branch",
    "fmt-merge-msg",
    "for-each-ref",
    "for-each-repo",
    "format-patch",
    "fsck",
    "gc",
    "get-tar-commit-id",
    "grep",
    "gui",
    "hash-object",
    "help",
    "hook",
    "http-backend",
    "index-pack",
    "init",
    "instaweb",
    "interpret-trailers",
    "log",
    "ls-files",
    "ls-remote",
    "ls-tree",
    "mailinfo",
    "mailsplit",
    "maintenance",
    "merge",
    "merge-base",
    "merge-file",
    "merge-index",
    "merge-tree",
    "mergetool",
    "mktag",
    "mktree",
    "multi-pack-index",
    "mv",
    "name-rev",
    "notes",
    "pack-objects",
    "pack-redundant",
    "pack-refs",
    "patch-id",
    "prune",
    "prune-packed",
    "pull",
    "push",
    "range-diff",
    "read-tree",
    "rebase",
    "receive-pack",
    "reflog",
    "refs",
    "remote",
    "repack",
    "replace",
    "replay",
    "request-pull",
    "rerere",
    "reset",
    "restore",
    "rev-list",
    "rev-parse",
    "revert",
    "rm",
    "send-email",
    "send-pack",
    "shortlog",
    "show",
    "show-branch",
    "show-index",
    "show-ref",
    "sparse-checkout",
    "stage",
    "stash",
    "status",
    "stripspace",
    "submodule",
    "switch",
    "symbolic-ref",
    "tag",
    "unpack-file",
    "unpack-objects",
    "update-index",
    "update-ref",
    "update-server-info",
    "upload-archive",
    "upload-pack",
    "var",
    "verify-commit",
    "verify-pack",
    "verify-tag",
    "version",
    "whatchanged",
    "worktree",
    "write-tree",
];

/// npm-family subcommand aliases, spelled out.
const NPM_ALIASES: &[(&str, &str)] = &[
    ("i", "install"),
    ("in", "install"),
    ("ins", "install"),
    ("inst", "install"),
    ("insta", "install"),
    ("instal", "install"),
    ("isnt", "install"),
    ("isnta", "install"),
    ("isntal", "install"),
    ("isntall", "install"),
    ("add", "install"),
    ("un", "uninstall"),
    ("unlink", "uninstall"),
    ("remove", "uninstall"),
    ("rm", "uninstall"),
    ("r", "uninstall"),
    ("t", "test"),
    ("tst", "test"),
    ("run-script", "run"),
    ("rum", "run"),
    ("urn", "run"),
    ("x", "exec"),
    ("c", "config"),
    ("up", "update"),
    ("upgrade", "update"),
    ("udpate", "update"),
    ("rb", "rebuild"),
    ("ci", "clean-install"),
    ("ic", "clean-install"),
    ("install-clean", "clean-install"),
    ("isntall-clean", "clean-install"),
    ("it", "install-test"),
    ("cit", "install-test"),
    ("pub", "publish"),
];

/// Every text deny and ask rules are matched against for `c`.
pub fn candidates(c: &SimpleCmd) -> Vec<Candidate> {
    let mut starts = vec![0];
    starts.extend(c.layers.iter().map(|l| l.at));
    if c.start < c.words.len() {
        starts.push(c.start);
    }
    starts.sort_unstable();
    starts.dedup();
    let mut out: Vec<Candidate> = Vec::new();
    let mut add = |cand: Candidate| {
        if !cand.0.trim().is_empty() && !out.contains(&cand) {
            out.push(cand);
        }
    };
    for from in starts {
        let Some(words) = c.words.get(from..).filter(|w| !w.is_empty()) else {
            continue;
        };
        let (text, dynamic) = c.match_text(from);
        let name = &words[0].text;
        let base = name.rsplit('/').next().unwrap_or(name).to_string();
        if base != *name
            && !base.is_empty()
            && let Some(rest) = text.strip_prefix(name.as_str())
        {
            add((format!("{base}{rest}"), dynamic));
        }
        add((text, dynamic));
        if c.unseen_args && !base.is_empty() {
            // Words runner cannot see may also replace the ones it sees (`xargs -I% sh -c 'gh
            // %'`, `find -exec CMD {}`): any deny rule for the program may match.
            add((format!("{base} "), true));
        }
        let readings = skipped_options(&base, &words[1..], c.unseen_args);
        // Commands with the same effect (`git send-pack` for `git push`).
        let mut all = readings.clone();
        all.push(c.match_text(from));
        for cand in readings {
            add(cand);
        }
        for cand in equivalents::of(words, &all) {
            add(cand);
        }
    }
    out
}

/// `prog`'s command with its leading options skipped, read every way they could be (each may
/// take the next word as its value), plus the alias readings.
fn skipped_options(prog: &str, args: &[ArgWord], unseen: bool) -> Vec<Candidate> {
    let mut out = Vec::new();
    if prog == "git" {
        let g = git::globals(args);
        match g.sub {
            Some(i) => {
                let sub = args[i].text.as_str();
                out.push(join(prog, &args[i..], unseen));
                out.extend(interleaved(prog, &args[i..], unseen));
                let aliased = args[..i].iter().any(|a| {
                    a.text.to_ascii_lowercase().contains("alias.")
                        || a.text.starts_with("--config-env")
                });
                if aliased || !GIT_BUILTINS.contains(&sub) {
                    out.push((format!("{prog} "), true));
                }
            }
            None => out.push((format!("{prog} "), true)),
        }
        return out;
    }
    // Leading options: `-x`, `--name`, `--name=v`, cargo's `+toolchain`.
    let mut paths: Vec<usize> = vec![0];
    let mut ambiguous = 0;
    let mut done: Vec<usize> = Vec::new();
    while let Some(i) = paths.pop() {
        match args.get(i) {
            Some(a) if a.dynamic && (a.text.is_empty() || a.text.starts_with('-')) => {
                out.push((format!("{prog} "), true));
            }
            Some(a)
                if (a.text.starts_with('-') && a.text.len() > 1 && a.text != "--")
                    || (prog == "cargo" && a.text.starts_with('+')) =>
            {
                let t = a.text.as_str();
                let attached =
                    t.contains('=') || t.starts_with('+') || (!t.starts_with("--") && t.len() > 2);
                paths.push(i + 1);
                if !attached {
                    ambiguous += 1;
                    if ambiguous > MAX_AMBIGUOUS {
                        out.push((format!("{prog} "), true));
                        continue;
                    }
                    paths.push(i + 2);
                }
            }
            Some(a) if a.text == "--" => done.push(i + 1),
            Some(_) => done.push(i),
            None => {}
        }
    }
    for i in done {
        if i == 0 || i >= args.len() {
            continue;
        }
        out.push(join(prog, &args[i..], unseen));
    }
    // Options anywhere among the subcommand words (`gh pr -R o/r merge`, `kubectl delete -n x
    // pod`), each read both ways.
    out.extend(interleaved(prog, args, unseen));
    // docker's management commands: `docker image push` is `docker push`, and back.
    if matches!(prog, "docker" | "podman") {
        out.extend(docker_spellings(prog, args, unseen));
    }
    // npm's aliases.
    if matches!(prog, "npm" | "pnpm" | "yarn")
        && let Some(first) = args.iter().position(|a| !a.text.starts_with('-'))
        && let Some((_, full)) = NPM_ALIASES.iter().find(|(a, _)| *a == args[first].text)
    {
        let mut words = vec![ArgWord::literal(full)];
        words.extend(args[first + 1..].iter().cloned());
        out.push(join(prog, &words, unseen));
    }
    out
}

/// `prog` followed by its non-option words, options removed wherever they stand, every way
/// their values could be read (an option without `=` may take the next word); past
/// [`MAX_AMBIGUOUS`] such options, the program name followed by anything.
fn interleaved(prog: &str, args: &[ArgWord], unseen: bool) -> Vec<Candidate> {
    let ambiguous = args
        .iter()
        .take_while(|a| a.text != "--")
        .filter(|a| is_option(a) && !a.text.contains('='))
        .count();
    if ambiguous > MAX_AMBIGUOUS {
        return vec![(format!("{prog} "), true)];
    }
    let mut out = Vec::new();
    // Each bit of `mask` says whether the n-th value-less option takes the next word.
    for mask in 0u32..(1u32 << ambiguous) {
        let mut kept: Vec<ArgWord> = Vec::new();
        let mut n = 0;
        let mut i = 0;
        while let Some(a) = args.get(i) {
            if a.text == "--" {
                kept.extend(args[i + 1..].iter().cloned());
                break;
            }
            if a.dynamic && (a.text.is_empty() || a.text.starts_with('-')) {
                // An expansion where an option may stand: anything may follow.
                out.push((format!("{prog} "), true));
                break;
            }
            if is_option(a) {
                let takes = !a.text.contains('=') && mask & (1 << n) != 0;
                if !a.text.contains('=') {
                    n += 1;
                }
                i += if takes { 2 } else { 1 };
                continue;
            }
            kept.push(a.clone());
            i += 1;
        }
        let cand = join(prog, &kept, unseen);
        if !out.contains(&cand) {
            out.push(cand);
        }
    }
    out
}

fn is_option(a: &ArgWord) -> bool {
    !a.dynamic && a.text.starts_with('-') && a.text.len() > 1 && a.text != "--"
}

/// docker's subcommands that are also management commands (`image`, `container`), both ways.
const DOCKER_MANAGED: &[(&str, &str, &str)] = &[
    ("image", "build", "build"),
    ("image", "history", "history"),
    ("image", "import", "import"),
    ("image", "load", "load"),
    ("image", "pull", "pull"),
    ("image", "push", "push"),
    ("image", "rm", "rmi"),
    ("image", "remove", "rmi"),
    ("image", "save", "save"),
    ("image", "tag", "tag"),
    ("image", "ls", "images"),
    ("container", "attach", "attach"),
    ("container", "commit", "commit"),
    ("container", "cp", "cp"),
    ("container", "create", "create"),
    ("container", "exec", "exec"),
    ("container", "export", "export"),
    ("container", "kill", "kill"),
    ("container", "rm", "rm"),
    ("container", "remove", "rm"),
    ("container", "run", "run"),
    ("container", "start", "start"),
    ("container", "stop", "stop"),
    ("container", "restart", "restart"),
    ("container", "update", "update"),
    ("container", "ls", "ps"),
];

/// `docker image push` as `docker push` and `docker push` as `docker image push` (options
/// removed as in [`interleaved`]).
fn docker_spellings(prog: &str, args: &[ArgWord], unseen: bool) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (text, dynamic) in interleaved(prog, args, unseen) {
        let rest = text.strip_prefix(prog).unwrap_or_default().trim_start();
        let mut words = rest.splitn(3, ' ');
        let (first, second, tail) = (words.next(), words.next(), words.next());
        for (group, long, short) in DOCKER_MANAGED {
            let tail = tail.map(|t| format!(" {t}")).unwrap_or_default();
            if first == Some(*group) && second == Some(*long) {
                out.push((format!("{prog} {short}{tail}"), dynamic));
            }
            if first == Some(*short) {
                let after = [second.unwrap_or_default(), tail.trim_start()]
                    .iter()
                    .filter(|w| !w.is_empty())
                    .copied()
                    .collect::<Vec<_>>()
                    .join(" ");
                let after = if after.is_empty() {
                    String::new()
                } else {
                    format!(" {after}")
                };
                let sep = if dynamic && after.is_empty() { " " } else { "" };
                out.push((format!("{prog} {group} {long}{after}{sep}"), dynamic));
            }
        }
    }
    out
}

fn join(prog: &str, words: &[ArgWord], unseen: bool) -> Candidate {
    let mut text = prog.to_string();
    for w in words {
        text.push(' ');
        text.push_str(&w.text);
        if w.dynamic {
            return (text, true);
        }
    }
    if unseen {
        text.push(' ');
        return (text, true);
    }
    (text, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::analyse;
    use crate::rule::{BashPattern, Tail};

    fn denied(rule: &str, cmd: &str) -> bool {
        let p = BashPattern::parse(rule);
        let a = analyse(cmd, std::path::Path::new("/w")).unwrap();
        a.commands.iter().any(|c| {
            candidates(c).iter().any(|(t, d)| {
                p.matches(
                    t,
                    if *d {
                        Tail::SomeContinuation
                    } else {
                        Tail::Exact
                    },
                )
            })
        })
    }

    #[test]
    fn global_options_do_not_hide_the_subcommand() {
        for cmd in [
            "git push",
            "git --no-pager push",
            "git -P push",
            "git -C d push",
            "git -Cd push",
            "git -c k=v push",
            "git --git-dir=.git --work-tree=. push origin",
            "git --frobnicate push",
            "git -c alias.p=push p",
            "git p",
            "echo push | xargs git",
            "xargs -a list git",
            "/usr/bin/git push",
            "timeout 5 git push",
            "sudo -u me git push",
            "env -i GIT_X=1 git push",
            "find . -exec git push \\;",
            "git $X",
        ] {
            assert!(denied("git push:*", cmd), "{cmd}");
        }
        assert!(!denied("git push:*", "git status"));
        assert!(!denied("git push:*", "echo git push"));
        for (rule, cmd) in [
            ("cargo publish:*", "cargo +nightly publish"),
            ("cargo publish:*", "cargo -v --locked publish"),
            ("cargo publish:*", "cargo --config x=y publish"),
            ("npm publish:*", "npm --prefix x publish"),
            ("npm install:*", "npm i left-pad"),
            ("npm install:*", "npm -g add x"),
            ("docker rm:*", "docker -H tcp://x rm c"),
            ("kubectl delete:*", "kubectl -n prod delete pod x"),
            ("kubectl delete:*", "kubectl --context=prod delete pod x"),
            ("gh pr merge:*", "gh -R o/r pr merge 1"),
            ("terraform apply:*", "terraform -chdir=infra apply"),
            ("helm uninstall:*", "helm --kube-context x uninstall y"),
            ("make deploy:*", "make -C sub deploy"),
        ] {
            assert!(denied(rule, cmd), "{rule} vs {cmd}");
        }
    }
}
