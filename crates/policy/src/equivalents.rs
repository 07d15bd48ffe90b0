//! Commands with the effect of another: a deny or ask rule on one covers its equivalents
//! (`Bash(git push:*)` denies `git send-pack`, `Bash(docker push:*)` denies `docker buildx
//! build --push`, `Bash(rm:*)` denies `find -delete`). Defined as data ([`TABLE`]); each match
//! adds the equivalent command, followed by anything, to the texts deny and ask rules are
//! matched against ([`crate::matchtext`]).

use super::word::ArgWord;

/// One equivalence: `program` (any of its names) with the leading subcommand `words` (options
/// skipped) and, when `options` is not empty, one of those options given (with a value
/// containing one of `values`, when that is not empty), has the effect of `means`.
pub struct Equivalent {
    /// The program's names.
    pub program: &'static [&'static str],
    /// Its subcommand words, in order (options between them skipped).
    pub words: &'static [&'static str],
    /// Options one of which must be given (`--push`, `-X`); empty: none needed.
    pub options: &'static [&'static str],
    /// Substrings one of which the option's value must contain; empty: any value.
    pub values: &'static [&'static str],
    /// The command it is equivalent to: deny rules for it (and for longer commands starting
    /// with it) match.
    pub means: &'static str,
}

const fn eq(
    program: &'static [&'static str],
    words: &'static [&'static str],
    options: &'static [&'static str],
    values: &'static [&'static str],
    means: &'static str,
) -> Equivalent {
    Equivalent {
        program,
        words,
        options,
        values,
        means,
    }
}

const GIT: &[&str] = &["git"];
const DOCKER: &[&str] = &["docker", "podman"];
const JS: &[&str] = &["pnpm", "yarn", "bun"];

/// The equivalent commands (documented in permissions.md).
pub const TABLE: &[Equivalent] = &[
    // Publishing commits.
    eq(GIT, &["send-pack"], &[], &[], "git push"),
    eq(GIT, &["http-push"], &[], &[], "git push"),
    eq(GIT, &["subtree", "push"], &[], &[], "git push"),
    eq(GIT, &["lfs", "push"], &[], &[], "git push"),
    // Any GitHub API request that is not a plain GET can do what any `gh` command does.
    eq(&["gh"], &["api"], &["-X", "--method"], &[], "gh"),
    eq(
        &["gh"],
        &["api"],
        &["-f", "-F", "--field", "--raw-field", "--input"],
        &[],
        "gh",
    ),
    // Publishing images.
    eq(
        DOCKER,
        &["buildx", "build"],
        &["--push"],
        &[],
        "docker push",
    ),
    eq(
        DOCKER,
        &["buildx", "build"],
        &["--output", "-o"],
        &["registry", "push=true"],
        "docker push",
    ),
    eq(DOCKER, &["buildx", "bake"], &["--push"], &[], "docker push"),
    eq(
        DOCKER,
        &["buildx", "imagetools", "create"],
        &[],
        &[],
        "docker push",
    ),
    eq(DOCKER, &["compose", "push"], &[], &[], "docker push"),
    eq(DOCKER, &["manifest", "push"], &[], &[], "docker push"),
    eq(
        &["docker-compose", "podman-compose"],
        &["push"],
        &[],
        &[],
        "docker push",
    ),
    eq(&["podman"], &["push"], &[], &[], "docker push"),
    // Publishing packages.
    eq(JS, &["publish"], &[], &[], "npm publish"),
    eq(&["yarn"], &["npm", "publish"], &[], &[], "npm publish"),
    eq(&["cargo"], &["release"], &[], &[], "cargo publish"),
    // Deleting files.
    eq(
        &["unlink", "rmdir", "srm", "trash", "trash-put"],
        &[],
        &[],
        &[],
        "rm",
    ),
    eq(&["shred"], &[], &["-u", "--remove"], &[], "rm"),
    eq(&["find"], &[], &["-delete"], &[], "rm"),
    eq(GIT, &["rm"], &[], &[], "rm"),
    eq(
        &["rsync"],
        &[],
        &[
            "--delete",
            "--del",
            "--delete-before",
            "--delete-during",
            "--delete-delay",
            "--delete-after",
            "--delete-excluded",
            "--remove-source-files",
        ],
        &[],
        "rm",
    ),
    // Deleting cluster objects and infrastructure.
    eq(
        &["kubectl"],
        &["apply"],
        &["--prune"],
        &[],
        "kubectl delete",
    ),
    eq(
        &["kubectl"],
        &["replace"],
        &["--force"],
        &[],
        "kubectl delete",
    ),
    eq(&["helm"], &["delete"], &[], &[], "helm uninstall"),
    eq(&["helm"], &["del"], &[], &[], "helm uninstall"),
    eq(&["helm"], &["un"], &[], &[], "helm uninstall"),
    eq(
        &["terraform", "tofu"],
        &["apply"],
        &["-destroy"],
        &[],
        "terraform destroy",
    ),
    eq(
        &["terraform", "tofu"],
        &["destroy"],
        &[],
        &[],
        "terraform apply",
    ),
    // Merging.
    eq(&["gh"], &["pr", "merge"], &[], &[], "gh pr merge"),
];

/// The commands `words` (a program's name and arguments, after its wrappers) is equivalent
/// to, each as a prefix followed by anything (`("git push ", true)`). `readings` are the texts
/// the command is matched as (options skipped every way they could be read).
pub fn of(words: &[ArgWord], readings: &[(String, bool)]) -> Vec<(String, bool)> {
    let Some(name) = words.first() else {
        return vec![];
    };
    let base = name.text.rsplit('/').next().unwrap_or_default();
    let mut out: Vec<(String, bool)> = Vec::new();
    for e in TABLE.iter().filter(|e| e.program.contains(&base)) {
        let subcommand = e.words.is_empty()
            || readings.iter().any(|(text, _)| {
                let mut w = text.split(' ');
                w.next().is_some_and(|p| p.rsplit('/').next() == Some(base))
                    && e.words.iter().all(|x| w.next() == Some(x))
            });
        if subcommand && option_given(e, &words[1..]) {
            let cand = (format!("{} ", e.means), true);
            if !out.contains(&cand) {
                out.push(cand);
            }
        }
    }
    out
}

/// Whether one of `e`'s options is among `args` (with a value `e` accepts).
fn option_given(e: &Equivalent, args: &[ArgWord]) -> bool {
    if e.options.is_empty() {
        return true;
    }
    args.iter().enumerate().any(|(i, a)| {
        let t = a.text.as_str();
        e.options.iter().any(|o| {
            let value = if t == *o {
                args.get(i + 1).map(|v| v.text.as_str())
            } else if let Some(v) = t.strip_prefix(o).and_then(|r| r.strip_prefix('=')) {
                Some(v)
            } else if !o.starts_with("--") && t.starts_with(o) && t.len() > o.len() {
                Some(&t[o.len()..])
            } else {
                return false;
            };
            e.values.is_empty()
                || value.is_some_and(|v| e.values.iter().any(|x| v.contains(x)))
                || a.dynamic
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn means(cmd: &str) -> Vec<String> {
        let words = ArgWord::split(cmd);
        let reading = words
            .iter()
            .filter(|w| !w.text.starts_with('-'))
            .map(|w| w.text.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        of(&words, &[(reading, false)])
            .into_iter()
            .map(|(t, _)| t)
            .collect()
    }

    #[test]
    fn equivalents_are_found() {
        for (cmd, want) in [
            ("git send-pack origin main", "git push "),
            ("gh api -XPUT repos/o/r/pulls/1/merge", "gh "),
            ("gh api --method=DELETE repos/o/r", "gh "),
            ("docker buildx build -o type=registry .", "docker push "),
            ("podman push img", "docker push "),
            ("rsync -a --delete-after src/ dst/", "rm "),
            ("find . -delete", "rm "),
            ("helm del x", "helm uninstall "),
        ] {
            assert!(
                means(cmd).contains(&want.to_string()),
                "{cmd}: {:?}",
                means(cmd)
            );
        }
        for cmd in [
            "gh api repos/o/r/pulls",
            "docker buildx build -t x .",
            "docker buildx build -o type=local,dest=out .",
            "rsync -a src/ dst/",
            "find . -name x",
        ] {
            assert!(means(cmd).is_empty(), "{cmd}: {:?}", means(cmd));
        }
    }
}
