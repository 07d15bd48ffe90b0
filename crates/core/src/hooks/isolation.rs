//! What hooks and MCP servers start with, so that they run no workdir code by accident: a
//! working directory outside the workdir (an empty one made for the task, unless the spec's
//! `cwd` names another), Python told not to put that directory on its import path
//! (`PYTHONSAFEPATH=1`) nor to write bytecode (`PYTHONDONTWRITEBYTECODE=1`), and none of the
//! variables that make interpreters load code (`NODE_OPTIONS`, `PYTHONPATH`, `LD_PRELOAD`, …)
//! when they point into the workdir.

use std::path::{Path, PathBuf};

use crate::permissions::paths;

/// Variables set for every hook and MCP server.
pub(crate) const SAFE_ENV: &[(&str, &str)] =
    &[("PYTHONSAFEPATH", "1"), ("PYTHONDONTWRITEBYTECODE", "1")];

/// Variables whose value makes a program load code at start: options (`NODE_OPTIONS=--require
/// ./x.js`), files run first (`BASH_ENV`, `PYTHONSTARTUP`) or libraries preloaded. Removed from
/// what hooks inherit whatever they say.
pub(crate) const STARTUP_CODE_VARS: &[&str] = &[
    "NODE_OPTIONS",
    "RUBYOPT",
    "PERL5OPT",
    "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS",
    "PYTHONSTARTUP",
    "BASH_ENV",
    "ENV",
    "LD_PRELOAD",
    "LD_AUDIT",
    "DYLD_INSERT_LIBRARIES",
];

/// Variables listing directories (or files) code is loaded from. Removed from what hooks
/// inherit when an entry is relative, empty (the working directory) or inside the workdir.
pub(crate) const CODE_PATH_VARS: &[&str] = &[
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUSERBASE",
    "NODE_PATH",
    "PERL5LIB",
    "PERLLIB",
    "RUBYLIB",
    "GEM_PATH",
    "GEM_HOME",
    "BUNDLE_GEMFILE",
    "CLASSPATH",
    "LD_LIBRARY_PATH",
    "DYLD_LIBRARY_PATH",
    "GOFLAGS",
    "RUSTC_WRAPPER",
    "CARGO_HOME",
    "NPM_CONFIG_PREFIX",
    "npm_config_prefix",
    "NPM_CONFIG_USERCONFIG",
    "npm_config_userconfig",
    "PIP_CONFIG_FILE",
    "UV_CONFIG_FILE",
];

/// An empty directory made for the task: where hooks and MCP servers run by default. It is
/// removed with the value.
pub(crate) fn empty_dir() -> std::io::Result<tempfile::TempDir> {
    let d = tempfile::Builder::new().prefix("runner-empty-").tempdir()?;
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o555))?;
    Ok(d)
}

/// Whether `value` of variable `name` makes a program load code from the workdir (or from a
/// directory given relative to wherever it runs).
pub(crate) fn points_into_workdir(name: &str, value: &str, workdir: &Path) -> bool {
    if STARTUP_CODE_VARS.contains(&name) {
        // A file named relative to wherever the program runs (`./x.js`, `lib.so`, `a/b.rb`).
        return mentions_workdir(value, workdir)
            || value
                .split(|c: char| c.is_whitespace() || c == '=' || c == ':')
                .any(|t| !t.starts_with(['-', '/']) && t.contains(['.', '/']));
    }
    if !CODE_PATH_VARS.contains(&name) {
        return false;
    }
    value.split(':').any(|entry| {
        entry.is_empty()
            || !entry.starts_with('/')
            || inside(Path::new(entry), workdir)
            // `GOFLAGS=-modfile=…`, `RUSTC_WRAPPER=…`: a path inside an option.
            || mentions_workdir(entry, workdir)
    }) || mentions_workdir(value, workdir)
}

/// The inherited variables a hook must not get: every start-up code variable that is set, and
/// the code-path variables that point into the workdir.
pub(crate) fn removed_from_inherited(
    workdir: &Path,
    lookup: impl Fn(&str) -> Option<String>,
) -> Vec<String> {
    STARTUP_CODE_VARS
        .iter()
        .chain(CODE_PATH_VARS)
        .filter(|n| {
            lookup(n).is_some_and(|v| {
                STARTUP_CODE_VARS.contains(n) || points_into_workdir(n, &v, workdir)
            })
        })
        .map(|n| n.to_string())
        .collect()
}

/// The working directory a spec's `cwd` names: relative to the workdir, absolute, or under
/// `$CLAUDE_PROJECT_DIR`; `None` when it names none.
pub(crate) fn spec_cwd(cwd: Option<&str>, workdir: &Path) -> Option<PathBuf> {
    let raw = cwd?.trim();
    if raw.is_empty() {
        return None;
    }
    let w = workdir.to_string_lossy();
    let expanded = raw
        .replace("${CLAUDE_PROJECT_DIR}", &w)
        .replace("$CLAUDE_PROJECT_DIR", &w);
    Some(paths::resolve(workdir, Path::new(&expanded)))
}

/// Whether `path` lies inside `workdir`, as written or once its links are resolved.
pub(crate) fn inside(path: &Path, workdir: &Path) -> bool {
    let real_workdir = std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf());
    let lexical = paths::resolve(workdir, path);
    lexical.starts_with(workdir)
        || crate::sandbox::files::resolve(&lexical).starts_with(&real_workdir)
}

fn mentions_workdir(value: &str, workdir: &Path) -> bool {
    let w = workdir.to_string_lossy();
    !w.is_empty() && w != "/" && value.contains(w.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_variables_into_the_workdir_are_found() {
        let w = Path::new("/ci/work");
        for (k, v) in [
            ("PYTHONPATH", "/usr/lib/py:/ci/work/src"),
            ("PYTHONPATH", "src"),
            ("PYTHONPATH", "/opt/x::/opt/y"),
            ("NODE_PATH", "./node_modules"),
            ("NODE_OPTIONS", "--require ./hook.js"),
            ("NODE_OPTIONS", "-r /ci/work/x.js"),
            ("LD_PRELOAD", "libevil.so"),
            ("RUBYLIB", "/ci/work/lib"),
            ("GOFLAGS", "-modfile=/ci/work/go.mod"),
        ] {
            assert!(points_into_workdir(k, v, w), "{k}={v}");
        }
        for (k, v) in [
            ("PYTHONPATH", "/usr/lib/python3/dist-packages"),
            ("NODE_PATH", "/usr/lib/node_modules"),
            ("NODE_OPTIONS", "--max-old-space-size=4096"),
            ("PATH", "."),
            ("LANG", "C.UTF-8"),
        ] {
            assert!(!points_into_workdir(k, v, w), "{k}={v}");
        }
        let env = |k: &str| match k {
            "PYTHONPATH" => Some("/ci/work".to_string()),
            "NODE_PATH" => Some("/usr/lib/node_modules".to_string()),
            "NODE_OPTIONS" => Some("--max-old-space-size=4096".to_string()),
            _ => None,
        };
        assert_eq!(
            removed_from_inherited(w, env),
            ["NODE_OPTIONS", "PYTHONPATH"]
        );
    }

    #[test]
    fn spec_cwd_resolves_against_the_workdir() {
        let w = Path::new("/ci/work");
        assert_eq!(spec_cwd(None, w), None);
        assert_eq!(spec_cwd(Some("."), w), Some(PathBuf::from("/ci/work")));
        assert_eq!(
            spec_cwd(Some("$CLAUDE_PROJECT_DIR/tools"), w),
            Some(PathBuf::from("/ci/work/tools"))
        );
        assert_eq!(
            spec_cwd(Some("/opt/mcp"), w),
            Some(PathBuf::from("/opt/mcp"))
        );
        assert!(inside(Path::new("sub/../x"), w));
        assert!(!inside(Path::new("/opt/mcp"), w));
    }
}
