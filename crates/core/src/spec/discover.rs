//! Expand PATH arguments into spec files.

use std::fs;
use std::path::PathBuf;

use super::load::SpecError;

/// Expand PATH arguments: a file is taken as given; a directory expands to its `*.yaml` and
/// `*.yml` files (not recursive, sorted by name). A missing path, or a directory without spec
/// files, is an error.
pub fn discover(paths: &[PathBuf]) -> Result<Vec<PathBuf>, SpecError> {
    let mut out = Vec::new();
    for path in paths {
        let meta = fs::metadata(path).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    "no such file or directory; expected a task spec file or a directory of them"
                        .to_string()
                }
                _ => format!("cannot be read: {e}"),
            };
            let e = SpecError::file(path, why);
            // `runner exec "fix the tests"`: a prompt given where a spec path goes.
            let text = path.to_string_lossy();
            if !e.message.starts_with("no such file") {
                return e;
            }
            if text.contains(' ') {
                e.with_help(format!(
                    "to run a prompt without a spec file, use `runner exec -p {text:?}`"
                ))
            } else if let Some(near) = super::closest::closest_existing(path) {
                e.with_help(format!("did you mean `{}`?", near.display()))
            } else if text.contains(['*', '?']) {
                e.with_help("the pattern matched no file (the shell passed it on as written)")
            } else {
                e
            }
        })?;
        if !meta.is_dir() {
            out.push(path.clone());
            continue;
        }
        let entries = fs::read_dir(path)
            .map_err(|e| SpecError::file(path, format!("cannot list directory: {e}")))?;
        let mut found = Vec::new();
        for entry in entries {
            let entry =
                entry.map_err(|e| SpecError::file(path, format!("cannot list directory: {e}")))?;
            let file = entry.path();
            let is_spec = file
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| e == "yaml" || e == "yml");
            if is_spec && file.is_file() {
                found.push(file);
            }
        }
        if found.is_empty() {
            return Err(SpecError::file(
                path,
                "directory holds no task specs; expected `*.yaml` or `*.yml` files in it",
            ));
        }
        found.sort();
        out.extend(found);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_as_given_directories_expanded_sorted() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        for f in ["b.yaml", "a.yml", "c.txt", "z.YAML.bak"] {
            fs::write(d.join(f), "name: x\n").unwrap();
        }
        fs::create_dir(d.join("sub.yaml")).unwrap();
        fs::create_dir(d.join("nested")).unwrap();
        fs::write(d.join("nested/deep.yaml"), "").unwrap();
        let single = d.join("c.txt");
        let got = discover(&[single.clone(), d.to_path_buf()]).unwrap();
        assert_eq!(got, vec![single, d.join("a.yml"), d.join("b.yaml")]);
    }

    #[test]
    fn missing_path_and_empty_directory_are_errors() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("nope.yaml");
        let e = discover(std::slice::from_ref(&missing)).unwrap_err();
        assert_eq!(e.file, missing);
        assert!(e.message.contains("no such file"), "{e}");

        let empty = tmp.path().join("empty");
        fs::create_dir(&empty).unwrap();
        fs::write(empty.join("notes.md"), "").unwrap();
        let e = discover(std::slice::from_ref(&empty)).unwrap_err();
        assert!(e.message.contains("no task specs"), "{e}");
        assert!(e.to_string().starts_with(&empty.display().to_string()));
    }
}
