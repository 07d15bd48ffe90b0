//! git: its global options (skipped when deny and ask rules are matched, so `git -C d push`
//! is `git push`), the read-only subcommands and the options their manuals document as
//! harmless, and the repository configuration that would make a read run a program.
//!
//! A git read the policy allows without a rule runs with the global and system configuration
//! switched off and the dangerous repository keys overridden (see `crate::process::git_env`);
//! what an environment variable cannot override (`diff.external`, diff and filter drivers,
//! `core.worktree`) is looked for here, in the configuration of the repository the command
//! would use, and makes the command not read-only.

use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use super::options::{self, Compiled, Effect, Style, Table};
use super::word::ArgWord;

/// Why runner does not treat a `git` command as read-only, or cannot see the shell alias it
/// runs (shown in the permission decision's reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GitRefusal(pub String);

impl From<&str> for GitRefusal {
    fn from(s: &str) -> Self {
        GitRefusal(s.to_string())
    }
}

/// git's global options that take a value in the next word (or after `=`).
const GLOBAL_WITH_VALUE: &[&str] = &[
    "-C",
    "-c",
    "--git-dir",
    "--work-tree",
    "--namespace",
    "--config-env",
    "--super-prefix",
    "--attr-source",
    "--list-cmds",
    "--exec-path",
];

/// git's global options without a value.
const GLOBAL_FLAGS: &[&str] = &[
    "-p",
    "-P",
    "--paginate",
    "--no-pager",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-optional-locks",
    "--no-advice",
    "--bare",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
    "--html-path",
    "--man-path",
    "--info-path",
    "--exec-path",
    "-v",
    "--version",
    "-h",
    "--help",
];

/// Global options that change nothing a read-only command could do.
const GLOBAL_HARMLESS: &[&str] = &[
    "--no-pager",
    "-P",
    "--no-optional-locks",
    "--no-replace-objects",
    "--no-lazy-fetch",
    "--no-advice",
    "--literal-pathspecs",
    "--glob-pathspecs",
    "--noglob-pathspecs",
    "--icase-pathspecs",
];

/// Where git's subcommand is, past its global options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Globals {
    /// Index (in the arguments after `git`) of the subcommand; `None` when an option is not
    /// known (the subcommand cannot be told).
    pub sub: Option<usize>,
    /// Whether every global option before it is harmless ([`GLOBAL_HARMLESS`]).
    pub harmless: bool,
}

/// Skip git's global options in `args` (the words after `git`).
pub fn globals(args: &[ArgWord]) -> Globals {
    let mut i = 0;
    let mut harmless = true;
    while let Some(a) = args.get(i) {
        if a.dynamic {
            return Globals {
                sub: None,
                harmless: false,
            };
        }
        let t = a.text.as_str();
        if !t.starts_with('-') {
            return Globals {
                sub: Some(i),
                harmless,
            };
        }
        if t == "--" {
            return Globals {
                sub: (i + 1 < args.len()).then_some(i + 1),
                harmless,
            };
        }
        let name = t.split('=').next().unwrap_or(t);
        harmless &= GLOBAL_HARMLESS.contains(&t);
        if GLOBAL_WITH_VALUE.contains(&name) && !t.contains('=') && name != "--exec-path" {
            i += 2;
        } else if GLOBAL_WITH_VALUE.contains(&name)
            || GLOBAL_FLAGS.contains(&t)
            || (t.starts_with("-C") || t.starts_with("-c")) && t.len() > 2 && !t.starts_with("--")
        {
            i += 1;
        } else {
            return Globals {
                sub: None,
                harmless: false,
            };
        }
    }
    Globals {
        sub: None,
        harmless,
    }
}

/// Options shared by the diff-producing subcommands (`diff`, `log -p`, `show`).
const DIFF_OPTIONS: &str = "-p -u --patch -s --no-patch -U? --unified= --output-indicator-new= --output-indicator-old= --output-indicator-context= --raw --patch-with-raw --indent-heuristic --no-indent-heuristic --minimal --patience --histogram --anchored= --diff-algorithm= --stat? --stat-width= --stat-name-width= --stat-count= --stat-graph-width= --compact-summary --numstat --shortstat -X? --dirstat? --cumulative --dirstat-by-file? --summary --patch-with-stat -z --name-only --name-status --submodule? --color? --no-color --color-moved? --no-color-moved --color-moved-ws= --no-color-moved-ws --word-diff? --word-diff-regex= --color-words? --no-renames --rename-empty --no-rename-empty --check --ws-error-highlight= --full-index --binary --abbrev? --no-abbrev -B? --break-rewrites? -M? --find-renames? -C? --find-copies? --find-copies-harder -D --irreversible-delete -l? --diff-filter= -S? -G? --find-object= --pickaxe-all --pickaxe-regex --skip-to= --rotate-to= -R --relative? --no-relative -a --text --ignore-cr-at-eol --ignore-space-at-eol -b --ignore-space-change -w --ignore-all-space --ignore-blank-lines -I? --ignore-matching-lines= --inter-hunk-context= -W --function-context --exit-code --quiet --no-ext-diff --no-textconv --ignore-submodules? --src-prefix= --dst-prefix= --no-prefix --default-prefix --line-prefix= --ita-invisible-in-index --ita-visible-in-index";

/// Options of the revision-walking subcommands (`log`, `show`).
const LOG_OPTIONS: &str = "--follow --no-follow --no-decorate --decorate? --decorate-refs= --decorate-refs-exclude= --clear-decorations --source --mailmap --no-mailmap --use-mailmap --no-use-mailmap --full-diff --log-size -L? -n= --max-count= --skip= --since= --after= --since-as-filter= --until= --before= --author= --committer= --grep-reflog= --grep= --all-match --invert-grep -i --regexp-ignore-case --basic-regexp -E --extended-regexp -F --fixed-strings -P --perl-regexp --remove-empty --merges --no-merges --min-parents= --max-parents= --no-min-parents --no-max-parents --first-parent --exclude-first-parent-only --not --all --branches? --tags? --remotes? --glob= --exclude= --reflog --alternate-refs --single-worktree --ignore-missing --bisect --cherry-mark --cherry-pick --left-only --right-only --cherry -g --walk-reflogs --merge --boundary --simplify-by-decoration --show-pulls --full-history --dense --sparse --simplify-merges --ancestry-path? --date-order --author-date-order --topo-order --reverse --no-walk? --do-walk --pretty? --format= --abbrev-commit --no-abbrev-commit --oneline --encoding= --expand-tabs? --no-expand-tabs --notes? --no-notes --show-notes? --standard-notes --no-standard-notes --relative-date --date= --parents --children --left-right --graph --show-linear-break? -m -c --cc --dd --remerge-diff --diff-merges= --no-diff-merges --combined-all-paths -t --root --no-root";

/// The harmless options of a read-only git subcommand, as an option table: by their full
/// names only (the table lists only the harmless options, so an abbreviation could stand for
/// one it does not list), clusters and attached values as git reads them, `-NUM` for a count.
fn harmless_table(options: &'static str) -> Compiled {
    let table: &'static Table = Box::leak(Box::new(Table {
        programs: &["git"],
        style: Style {
            prefixes: false,
            single_dash_long: false,
            posix: false,
            assignments: false,
            old_tar: false,
            response_files: false,
            numeric: true,
            negations: false,
        },
        complete: false,
        expansions_risky: true,
        options,
    }));
    Compiled::new(table)
}

/// The read-only git subcommands and their harmless options.
static SUBCOMMANDS: LazyLock<Vec<(&'static str, Compiled)>> = LazyLock::new(|| {
    let join = |parts: &[&str]| -> &'static str { Box::leak(parts.join(" ").into_boxed_str()) };
    vec![
        (
            "status",
            harmless_table(
                "-s --short -b --branch --show-stash --porcelain? --long -v --verbose -u? --untracked-files? --ignore-submodules? --ignored? -z --column? --no-column --ahead-behind --no-ahead-behind --renames --no-renames --find-renames?",
            ),
        ),
        (
            "diff",
            harmless_table(join(&[
                DIFF_OPTIONS,
                "--cached --staged --merge-base -1 --base -2 --ours -3 --theirs -0",
            ])),
        ),
        ("log", harmless_table(join(&[DIFF_OPTIONS, LOG_OPTIONS]))),
        ("show", harmless_table(join(&[DIFF_OPTIONS, LOG_OPTIONS]))),
        (
            "branch",
            harmless_table(
                "--list -l -a --all -r --remotes -v --verbose --show-current --no-color --color? --column? --no-column --sort= --format= --contains? --no-contains? --merged? --no-merged? --points-at= -i --ignore-case --omit-empty --abbrev= --no-abbrev",
            ),
        ),
        (
            "ls-files",
            harmless_table(
                "-c -d -m -o -i -s -u -k -z -t -v -f --cached --deleted --modified --others --ignored --stage --unmerged --killed --directory --no-empty-directory --eol --deduplicate -x= --exclude= --exclude-standard --error-unmatch --with-tree= --full-name --recurse-submodules --abbrev? --debug --sparse --format= --resolve-undo",
            ),
        ),
        (
            "grep",
            harmless_table(
                "-a --text --no-textconv -i --ignore-case -I --max-depth= -r --recursive --no-recursive -w --word-regexp -v --invert-match -h -H --full-name -E --extended-regexp -G --basic-regexp -F --fixed-strings -P --perl-regexp -n --line-number --column -l --files-with-matches --name-only -L --files-without-match -z --null -o --only-matching -c --count --color? --no-color --break --heading -p --show-function -A= -B= -C= --after-context= --before-context= --context= -W --function-context -m= --max-count= --threads= -f=r -e= --and --or --not --all-match -q --quiet --cached --exclude-standard --no-exclude-standard --recurse-submodules --parent-basename",
            ),
        ),
        (
            "blame",
            harmless_table(
                "-b --root --show-stats -L= -l -t --reverse= --first-parent -p --porcelain --line-porcelain --incremental --encoding= --date= --progress --no-progress -M? -C? --ignore-rev= --color-lines --color-by-age -c --score-debug -f --show-name -n --show-number -s -e --show-email -w --abbrev=",
            ),
        ),
    ]
});

/// The shell command a `git -c alias.NAME='!BODY' NAME ARGS…` runs: git gives `BODY` to
/// `sh -c` (with `ARGS` appended), so it is decided as shell commands. `Ok(Some((body,
/// args)))` for such an alias (`args`: whether more words follow, which the body gets as
/// arguments runner does not see); `Ok(None)` when the subcommand is no shell alias given on
/// the command line; `Err` when its definition is only known at run time.
pub fn alias_body(args: &[ArgWord]) -> Result<Option<(String, bool)>, GitRefusal> {
    let Some(sub) = globals(args).sub else {
        return Ok(None);
    };
    let name = args[sub].text.to_ascii_lowercase();
    let mut body = None;
    let mut i = 0;
    while i < sub {
        let t = args[i].text.as_str();
        let def = match t {
            "-c" => {
                i += 1;
                args.get(i)
            }
            _ if t.starts_with("--config-env=") => {
                let key = t["--config-env=".len()..]
                    .split('=')
                    .next()
                    .unwrap_or_default();
                if key.to_ascii_lowercase() == format!("alias.{name}") {
                    return Err(GitRefusal(format!(
                        "`git {t}` defines the alias `{name}` from the environment"
                    )));
                }
                None
            }
            _ => None,
        };
        let text = match def {
            Some(d) => Some((d.text.clone(), d.dynamic)),
            None => t
                .strip_prefix("-c")
                .filter(|r| !r.is_empty() && !t.starts_with("--"))
                .map(|r| (r.to_string(), args[i].dynamic)),
        };
        if let Some((kv, dynamic)) = text
            && let Some((key, value)) = kv.split_once('=')
            && key.to_ascii_lowercase() == format!("alias.{name}")
        {
            if dynamic {
                return Err(GitRefusal(format!(
                    "the alias `{name}` is defined by `{}`, which is expanded at run time",
                    args[i].raw
                )));
            }
            body = value.strip_prefix('!').map(str::to_string);
            if body.is_none() {
                return Ok(None);
            }
        }
        i += 1;
    }
    Ok(body.map(|b| (b, sub + 1 < args.len())))
}

/// The value of `alias.NAME` in the configuration files `files` (the last one that sets it
/// wins, as in git), for `git NAME` with a subcommand that is not one of git's own.
pub fn config_alias(files: &[PathBuf], name: &str) -> Option<String> {
    let mut found = None;
    for f in files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        let mut in_alias = false;
        for line in text.lines() {
            let mut l = line.trim();
            if l.starts_with('[') {
                let Some(end) = l.find(']') else { continue };
                in_alias = l[1..end].trim().eq_ignore_ascii_case("alias");
                l = l[end + 1..].trim();
            }
            if !in_alias {
                continue;
            }
            if let Some((key, value)) = l.split_once('=')
                && key.trim().eq_ignore_ascii_case(name)
            {
                found = Some(value.trim().trim_matches('"').to_string());
            }
        }
    }
    found
}

/// Options after which `git log` (and `whatchanged`) prints patches.
const PATCH_OPTIONS: &[&str] = &[
    "-p",
    "-u",
    "--patch",
    "-c",
    "--cc",
    "--dd",
    "--remerge-diff",
    "--patch-with-stat",
    "--patch-with-raw",
    "--word-diff",
    "--color-words",
    "-W",
    "--function-context",
    "--ext-diff",
    "--textconv",
];

/// Options after which `git show` and `git diff` print no file contents (unless a patch is
/// asked for too).
const NO_PATCH_OPTIONS: &[&str] = &[
    "-s",
    "--no-patch",
    "--stat",
    "--numstat",
    "--shortstat",
    "--name-only",
    "--name-status",
    "--summary",
    "--raw",
    "--dirstat",
    "--compact-summary",
    "--quiet",
    "--exit-code",
    "--check",
];

/// When `git ARGS` prints file contents from the repository or its history (a commit's
/// patch, a blob, an archive, search hits): the subcommand, and the index in `args` where its
/// own words start. A Read deny rule covering a path in the repository then needs the output
/// restricted to paths it does not cover.
pub fn content_reader(args: &[ArgWord]) -> Option<(String, usize)> {
    let sub_at = globals(args).sub?;
    let sub = args[sub_at].text.as_str();
    let rest = &args[sub_at + 1..];
    let has = |names: &[&str]| {
        rest.iter().take_while(|a| a.text != "--").any(|a| {
            let t = a.text.as_str();
            names.iter().any(|n| {
                t == *n
                    || t.strip_prefix(n).is_some_and(|r| r.starts_with('='))
                    || (*n == "-U" && t.starts_with("-U"))
            })
        })
    };
    let patch = has(PATCH_OPTIONS) || has(&["-U", "--unified", "-L"]);
    let prints = match sub {
        "log" | "whatchanged" | "reflog" => patch,
        "show" | "diff" | "diff-index" | "diff-files" | "stash" => {
            patch || !has(NO_PATCH_OPTIONS) && sub != "stash"
        }
        "diff-tree" => patch,
        "cat-file" => !has(&["-t", "-s", "-e"]),
        "archive" | "format-patch" | "fast-export" | "bundle" | "grep" | "range-diff" | "blame"
        | "annotate" | "apply" | "am" | "difftool" | "send-email" | "request-pull" => true,
        _ => false,
    };
    prints.then(|| (sub.to_string(), sub_at + 1))
}

/// Whether `git ARGS` (the words after `git`) is read-only; `Err` says why not. Every word must
/// be static; `rev-parse` takes any option (it only prints).
pub fn check_read_only(args: &[ArgWord]) -> Result<(), GitRefusal> {
    if let Some(a) = args.iter().find(|a| a.dynamic) {
        return Err(GitRefusal(format!(
            "git arguments must be static for the read-only set, and `{}` is expanded at run time",
            a.raw
        )));
    }
    let g = globals(args);
    let Some(sub_at) = g.sub else {
        return Err(match args.first() {
            None => "`git` without a subcommand is not read-only".into(),
            Some(_) => "git's options before the subcommand are not understood".into(),
        });
    };
    if !g.harmless {
        let opt = args[..sub_at]
            .iter()
            .find(|a| !GLOBAL_HARMLESS.contains(&a.text.as_str()))
            .map(|a| a.text.clone())
            .unwrap_or_default();
        return Err(GitRefusal(format!(
            "the git option `{opt}` before the subcommand is not read-only"
        )));
    }
    let sub = args[sub_at].text.as_str();
    let rest = &args[sub_at + 1..];
    if sub == "rev-parse" {
        return Ok(());
    }
    let Some((_, opts)) = SUBCOMMANDS.iter().find(|(n, _)| *n == sub) else {
        return Err(GitRefusal(format!(
            "`git {sub}` is not a read-only git command"
        )));
    };
    let parsed = options::parse(opts, rest);
    if let Some(u) = parsed.unknown.first() {
        return Err(GitRefusal(format!(
            "`git {sub} {u}` is not an option runner knows to be read-only"
        )));
    }
    if let Some(g) = parsed.missing_value() {
        return Err(GitRefusal(format!(
            "`git {sub} {}` needs a value",
            g.spelled
        )));
    }
    if let Some(g) = parsed
        .given
        .iter()
        .find(|g| g.opt.effect != Effect::Plain && g.opt.effect != Effect::Reads)
    {
        return Err(GitRefusal(format!(
            "`git {sub} {}` is not read-only",
            g.spelled
        )));
    }
    if sub == "branch" {
        let listing = parsed.has_any(&[
            "--list",
            "-l",
            "--contains",
            "--no-contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "--show-current",
        ]);
        if !parsed.operands.is_empty() && !listing {
            return Err("`git branch NAME` creates a branch".into());
        }
    }
    Ok(())
}

/// The operands of a read-only git command that may name files outside the repository (an
/// absolute path, `~`, or one that climbs with `..`): git reads them as files when it runs
/// outside a repository or with a pathspec that leaves it.
pub fn outside_candidates(args: &[ArgWord]) -> Vec<ArgWord> {
    args.iter()
        .filter(|a| !a.text.starts_with('-'))
        .filter(|a| {
            let t = a.text.as_str();
            let path = t.rsplit_once(':').map_or(t, |(_, p)| p);
            t.starts_with('/') || a.home_rest.is_some() || path.split('/').any(|c| c == "..")
        })
        .cloned()
        .collect()
}

/// Configuration keys that make a read-only command run a program or look outside the
/// repository and that an environment override cannot switch off (`core.fsmonitor`,
/// `core.pager`, `core.hooksPath` and the global files are overridden when the command runs;
/// an include cannot be followed here, so it counts too).
fn dangerous_key(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k == "diff.external"
        || k == "core.worktree"
        || (k.starts_with("diff.") && (k.ends_with(".textconv") || k.ends_with(".command")))
        || (k.starts_with("filter.")
            && (k.ends_with(".clean") || k.ends_with(".smudge") || k.ends_with(".process")))
        || k.starts_with("include.")
        || k.starts_with("includeif.")
}

/// The repository git would use when run in `cwd`, found as git finds it (a `.git` directory
/// or file, or a directory that is itself a bare repository), climbing no higher than the
/// first of `ceilings` it reaches.
pub fn find_repository(cwd: &Path, ceilings: &[&Path]) -> Option<Repo> {
    let mut dir = cwd.to_path_buf();
    loop {
        let dotgit = dir.join(".git");
        if dotgit.is_dir() {
            return Some(Repo {
                git_dir: dotgit,
                bare: false,
            });
        }
        if dotgit.is_file() {
            let text = std::fs::read_to_string(&dotgit).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            let p = dir.join(target);
            return Some(Repo {
                git_dir: p,
                bare: false,
            });
        }
        if dir.join("HEAD").is_file() && dir.join("objects").is_dir() && dir.join("refs").is_dir() {
            return Some(Repo {
                git_dir: dir,
                bare: true,
            });
        }
        if ceilings.contains(&dir.as_path()) || !dir.pop() {
            return None;
        }
    }
}

/// A repository found by [`find_repository`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Repo {
    /// Its git directory.
    pub git_dir: PathBuf,
    /// Whether it is a bare repository (found by its layout, not a `.git`).
    pub bare: bool,
}

/// Why git reads in `cwd` are not read-only, judged by the repository's own configuration:
/// a bare repository found by discovery (a pull request can commit one), or a configuration
/// key that runs a program which an environment override cannot switch off. `None`: nothing
/// found. Discovery climbs no higher than the first of `ceilings` (the workspace's repository
/// root, the additional directories) it reaches.
pub fn config_risk(cwd: &Path, ceilings: &[&Path]) -> Option<String> {
    let repo = find_repository(cwd, ceilings)?;
    if repo.bare {
        return Some(format!(
            "{} is a bare repository that git would find by discovery",
            repo.git_dir.display()
        ));
    }
    let mut files = vec![
        repo.git_dir.join("config"),
        repo.git_dir.join("config.worktree"),
    ];
    // A linked worktree's configuration lives in the common directory.
    if let Ok(common) = std::fs::read_to_string(repo.git_dir.join("commondir")) {
        let c = repo.git_dir.join(common.trim());
        files.push(c.join("config"));
        files.push(c.join("config.worktree"));
    }
    for f in files {
        let Ok(text) = std::fs::read_to_string(&f) else {
            continue;
        };
        if let Some(key) = config_keys(&text).into_iter().find(|k| dangerous_key(k)) {
            return Some(format!(
                "the repository configuration {} sets `{key}`, which makes git run a program or read outside the repository",
                f.display()
            ));
        }
    }
    None
}

/// The keys (`section.subsection.name`) set in git configuration text. Lenient: a line it
/// cannot read is skipped (the caller only looks for keys it fears, and a key git would read
/// from such a line is named in it).
fn config_keys(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        let mut l = line.trim();
        if l.starts_with('#') || l.starts_with(';') || l.is_empty() {
            continue;
        }
        if l.starts_with('[') {
            let Some(end) = l.find(']') else { continue };
            let head = &l[1..end];
            section = match head.split_once(char::is_whitespace) {
                Some((name, sub)) => {
                    let sub = sub.trim().trim_matches('"');
                    format!("{}.{}", name.trim(), sub)
                }
                None => head.trim().to_string(),
            };
            l = l[end + 1..].trim();
            if l.is_empty() {
                continue;
            }
        }
        let name: String = l
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        if !name.is_empty() {
            out.push(format!("{section}.{name}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<ArgWord> {
        ArgWord::split(s)
    }

    #[test]
    fn global_options_are_skipped() {
        for (args, sub) in [
            ("push", Some(0)),
            ("--no-pager push", Some(1)),
            ("-P push", Some(1)),
            ("-C d push", Some(2)),
            ("-Cd push", Some(1)),
            ("-c k=v push", Some(2)),
            ("-c k=v -C d --no-pager push", Some(5)),
            ("--git-dir=.git push", Some(1)),
            ("--git-dir .git push", Some(2)),
            ("--work-tree . push", Some(2)),
            ("--exec-path push", Some(1)),
            ("--frobnicate push", None),
        ] {
            assert_eq!(globals(&words(args)).sub, sub, "{args}");
        }
        assert!(globals(&words("--no-pager log")).harmless);
        assert!(!globals(&words("-c a=b log")).harmless);
    }

    #[test]
    fn read_only_subcommands_and_their_options() {
        for ok in [
            "status",
            "status --short",
            "diff",
            "diff --stat HEAD~1 -- src",
            "--no-pager log --oneline -5",
            "log -n 5 --format=%H",
            "show HEAD:README.md",
            "branch",
            "branch -a -v",
            "branch --list feat/*",
            "branch --contains HEAD",
            "rev-parse --show-toplevel",
            "ls-files -z",
            "grep -n foo -- src",
            "blame -L 1,5 README.md",
        ] {
            assert!(
                check_read_only(&words(ok)).is_ok(),
                "{ok}: {:?}",
                check_read_only(&words(ok))
            );
        }
        for bad in [
            "push",
            "diff --output=x",
            "diff --out=x",
            "diff --ext-diff",
            "diff --no-index a b",
            "log --show-signature",
            "blame --contents /etc/passwd x",
            "blame -S revs x",
            "grep -O foo",
            "grep --open-files-in-pager foo",
            "grep --no-index foo",
            "ls-files --exclude-from=/etc/x",
            "ls-files -X /etc/x",
            "branch evil",
            "branch -D main",
            "-c core.pager=x log",
            "-C /etc log",
            "-p log",
            "diff -O/etc/x",
            "log --textconv",
        ] {
            assert!(check_read_only(&words(bad)).is_err(), "{bad}");
        }
    }

    #[test]
    fn config_keys_and_risks() {
        let text = "[core]\n\tfsmonitor = x\n[diff \"evil\"]\n  textconv = sh\n[alias] st = status\n[user]\nname = a\n";
        assert_eq!(
            config_keys(text),
            [
                "core.fsmonitor",
                "diff.evil.textconv",
                "alias.st",
                "user.name"
            ]
        );
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("w");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join(".git/config"), "[core]\nbare = false\n").unwrap();
        assert_eq!(config_risk(&root, &[&root]), None);
        std::fs::write(root.join(".git/config"), "[diff]\nexternal = /tmp/x\n").unwrap();
        assert!(
            config_risk(&root, &[&root])
                .unwrap()
                .contains("diff.external")
        );
        // A bare repository planted in a subdirectory.
        let bare = root.join("vendor/x");
        for d in ["objects", "refs"] {
            std::fs::create_dir_all(bare.join(d)).unwrap();
        }
        std::fs::write(bare.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        assert!(
            config_risk(&bare, &[&root])
                .unwrap()
                .contains("bare repository")
        );
    }
}
