//! Before the first model request: every path the run will write — the transcript directory,
//! the patch directory, the JUnit report, the structured output file, the cassette being
//! recorded — is checked to be writable, so a typo or a read-only location is invalid input
//! (exit 2, nothing spent) instead of a failure after the tokens are paid for.
//!
//! Directories are created (the run would create them anyway) and probed with a temporary
//! file; a file's directory is probed the same way, and an existing file must be writable.

use std::fs::{self, OpenOptions};
use std::path::Path;

/// What the run will write, each with the flag that chose it.
#[derive(Debug, Default)]
pub struct OutputPaths<'a> {
    /// Directories: (flag, path).
    pub dirs: Vec<(&'static str, &'a Path)>,
    /// Files written whole, by replacing (JUnit: a temporary file renamed into place): the path
    /// must be a regular file or not exist yet.
    pub replaced: Vec<(&'static str, &'a Path)>,
    /// Files written in place (`--output-file`, which may be `/dev/stdout`): anything writable.
    pub written: Vec<(&'static str, &'a Path)>,
}

/// Every problem with `paths`, one message each naming the flag and the path.
pub fn check(paths: &OutputPaths<'_>) -> Vec<String> {
    let mut problems = Vec::new();
    for (flag, dir) in &paths.dirs {
        if let Err(why) = writable_dir(dir) {
            problems.push(format!("{flag} {}: {why}", dir.display()));
        }
    }
    for (flag, file) in &paths.replaced {
        if let Err(why) = writable_file(file, true) {
            problems.push(format!("{flag} {}: {why}", file.display()));
        }
    }
    for (flag, file) in &paths.written {
        if let Err(why) = writable_file(file, false) {
            problems.push(format!("{flag} {}: {why}", file.display()));
        }
    }
    problems
}

/// Create `dir` if needed and check a file can be created in it.
fn writable_dir(dir: &Path) -> Result<(), String> {
    match fs::metadata(dir) {
        Ok(m) if !m.is_dir() => return Err("exists and is not a directory".into()),
        Ok(_) => {}
        Err(_) => {
            fs::create_dir_all(dir).map_err(|e| format!("cannot be created: {e}"))?;
        }
    }
    tempfile::Builder::new()
        .prefix(".runner-write-check")
        .tempfile_in(dir)
        .map(drop)
        .map_err(|e| format!("is not writable: {e}"))
}

/// Check `file` can be written: its directory exists (or can be created) and takes new files,
/// and the file, if it exists, is not a directory, can be opened for writing and — when it is
/// `replaced` — is a regular file.
fn writable_file(file: &Path, replaced: bool) -> Result<(), String> {
    match fs::metadata(file) {
        Ok(m) if m.is_dir() => return Err("is a directory; expected a file".into()),
        Ok(m) if replaced && !m.is_file() => {
            return Err("is not a regular file; expected a file path".into());
        }
        Ok(_) => {
            // Opened without truncating: the check changes nothing.
            OpenOptions::new()
                .append(true)
                .open(file)
                .map_err(|e| format!("cannot be written: {e}"))?;
            if !replaced {
                return Ok(());
            }
        }
        Err(_) => {}
    }
    let parent = file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    writable_dir(parent).map_err(|why| format!("its directory {} {why}", parent.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directories_are_created_and_probed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        let paths = OutputPaths {
            dirs: vec![("--transcript-dir", &dir)],
            ..Default::default()
        };
        assert!(check(&paths).is_empty());
        assert!(dir.is_dir());
        assert_eq!(
            fs::read_dir(&dir).unwrap().count(),
            0,
            "the probe is removed"
        );
    }

    #[test]
    fn a_file_in_the_way_is_named_with_its_flag() {
        let tmp = tempfile::tempdir().unwrap();
        let file = tmp.path().join("f");
        fs::write(&file, "x").unwrap();
        let under = file.join("j.xml");
        let paths = OutputPaths {
            dirs: vec![("--transcript-dir", &file)],
            replaced: vec![("--junit", &under)],
            written: vec![("--output-file", tmp.path())],
        };
        let problems = check(&paths);
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0].starts_with(&format!(
            "--transcript-dir {}: exists and is not a directory",
            file.display()
        )));
        assert!(problems[1].starts_with(&format!("--junit {}: its directory", under.display())));
        assert!(problems[2].ends_with("is a directory; expected a file"));
        assert_eq!(fs::read_to_string(&file).unwrap(), "x");
    }

    #[test]
    fn devices_may_be_written_but_not_replaced() {
        let null = Path::new("/dev/null");
        let paths = OutputPaths {
            replaced: vec![("--junit", null)],
            written: vec![("--output-file", null)],
            ..Default::default()
        };
        let problems = check(&paths);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].starts_with("--junit /dev/null: is not a regular file"));
    }
}
