//! Hooks and verify checks that run a file inside the workdir: refused unless marked
//! `trusted: true`, never given secrets, their scripts protected (see
//! [`crate::hooks::trust`]).

use std::path::PathBuf;

use crate::hooks::trust::workdir_script;
use crate::spec::{LoadedSpec, SpecError};

/// Check the spec's hooks (settings files' included) and verify checks; the scripts of the
/// trusted ones, relative to the workdir, for the policy to protect.
pub fn check(loaded: &LoadedSpec, secrets: &[String]) -> Result<Vec<PathBuf>, SpecError> {
    let workdir = &loaded.workdir;
    let mut protected = Vec::new();
    let mut keep = |script: PathBuf| {
        if let Ok(rel) = script.strip_prefix(workdir)
            && !protected.contains(&rel.to_path_buf())
        {
            protected.push(rel.to_path_buf());
        }
    };
    for (event, groups) in &loaded.spec.hooks {
        for (g, group) in groups.iter().enumerate() {
            for (k, h) in group.hooks.iter().enumerate() {
                let Some(script) = workdir_script(&h.command, h.args.as_deref(), workdir) else {
                    continue;
                };
                let key = format!("hooks.{event}[{g}].hooks[{k}]");
                if !h.trusted {
                    return Err(SpecError::at(
                        loaded,
                        &key,
                        format!(
                            "the hook `{}` runs {}, a file inside the workdir that the agent (or the pull request under review) can change, so the hook would run their code with its privileges. Run a script from outside the workdir, or mark the hook `trusted: true` if the file is meant to be the repository's own",
                            h.command,
                            script.display()
                        ),
                    ));
                }
                if !h.env_passthrough.is_empty() {
                    return Err(SpecError::at(
                        loaded,
                        &key,
                        format!(
                            "the hook `{}` runs {}, a file inside the workdir, and cannot receive secrets: remove its `env_passthrough` ({})",
                            h.command,
                            script.display(),
                            h.env_passthrough.join(", ")
                        ),
                    ));
                }
                keep(script);
            }
        }
    }
    for (i, check) in loaded.spec.verify.iter().enumerate() {
        let Some(script) = workdir_script(&check.run, None, workdir) else {
            continue;
        };
        let key = format!("verify[{i}]");
        if !check.trusted {
            return Err(SpecError::at(
                loaded,
                &key,
                format!(
                    "the check `{}` runs {}, a file inside the workdir that the agent (or the pull request under review) can change. Run a script from outside the workdir, or mark the check `trusted: true` if the file is meant to be the repository's own",
                    check.run,
                    script.display()
                ),
            ));
        }
        if let Some((k, _)) = check
            .env
            .iter()
            .find(|(_, v)| secrets.iter().any(|s| v.contains(&format!("${{{s}}}"))))
        {
            return Err(SpecError::at(
                loaded,
                &format!("{key}.env.{k}"),
                format!(
                    "the check `{}` runs {}, a file inside the workdir, and cannot receive secrets: `{k}` passes one",
                    check.run,
                    script.display()
                ),
            ));
        }
        keep(script);
    }
    Ok(protected)
}
