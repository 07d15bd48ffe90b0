//! The existing path a missing one most likely meant (`crate/*` → `crates/*`,
//! `tasks/fix.yml` → `tasks/fix.yaml`): for spec paths and matrix globs that find nothing.

use std::path::{Component, Path, PathBuf};

/// `path` with each missing component up to the first glob component replaced by the closest
/// name in its directory (a few edits away); `None` when nothing close exists or nothing is
/// missing. Glob components and those after them are kept as written.
pub(crate) fn closest_existing(path: &Path) -> Option<PathBuf> {
    let comps: Vec<Component<'_>> = path.components().collect();
    let mut acc = PathBuf::new();
    let mut changed = false;
    for (i, c) in comps.iter().enumerate() {
        let Component::Normal(name) = c else {
            acc.push(c);
            continue;
        };
        let next = acc.join(name);
        if next.symlink_metadata().is_ok() {
            acc = next;
            continue;
        }
        let name = name.to_str()?;
        if is_glob(name) {
            comps[i..].iter().for_each(|r| acc.push(r));
            break;
        }
        let dir = if acc.as_os_str().is_empty() {
            Path::new(".")
        } else {
            acc.as_path()
        };
        let limit = (name.chars().count() / 3).max(2);
        let best = std::fs::read_dir(dir)
            .ok()?
            .flatten()
            .filter_map(|e| e.file_name().into_string().ok())
            .map(|n| (strsim::levenshtein(name, &n), n))
            .filter(|(d, _)| *d <= limit)
            .min()?;
        acc.push(best.1);
        changed = true;
    }
    changed.then_some(acc)
}

/// Whether a path component holds glob syntax.
fn is_glob(component: &str) -> bool {
    component.contains(['*', '?', '[', '{'])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixes_each_missing_component() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::create_dir_all(d.join("crates/core")).unwrap();
        std::fs::create_dir_all(d.join("tasks")).unwrap();
        std::fs::write(d.join("tasks/fix.yaml"), "").unwrap();
        assert_eq!(
            closest_existing(&d.join("crate/*")),
            Some(d.join("crates/*"))
        );
        assert_eq!(
            closest_existing(&d.join("task/fix.yml")),
            Some(d.join("tasks/fix.yaml"))
        );
        assert_eq!(closest_existing(&d.join("crates/*")), None);
        assert_eq!(closest_existing(&d.join("something-else/x")), None);
    }
}
