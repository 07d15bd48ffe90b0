//! "What it did": a task's footprint for a reviewer — the files it changed (with lines added
//! and removed) and the commands it ran (with exit codes and durations) — as the step
//! summary's tables, from the result alone, without opening the transcript or another model
//! call. (The calls denied have their own part of the summary.)

use crate::events::RunResult;

/// Most rows of each table.
const MAX_ROWS: usize = 50;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A command line or path for a table cell: one line, at most 120 characters, in a code span.
fn code(s: &str) -> String {
    let all = cell(s);
    let one: String = all.chars().take(120).collect();
    let cut = if one.len() < all.len() { "…" } else { "" };
    let ticks = if one.contains('`') { "``" } else { "`" };
    format!("{ticks}{one}{cut}{ticks}")
}

/// The files the task changed (a task in git): path, change, lines added and removed. `None`
/// when it changed none.
pub(crate) fn files_table(r: &RunResult) -> Option<String> {
    let files = r.git.as_ref().map(|g| g.files.as_slice()).unwrap_or(&[]);
    if files.is_empty() {
        return None;
    }
    let mut s = String::from("| file | change | + | − |\n|---|---|---|---|\n");
    for f in files.iter().take(MAX_ROWS) {
        let (add, del) = if f.binary {
            ("bin".to_string(), "bin".to_string())
        } else {
            (f.insertions.to_string(), f.deletions.to_string())
        };
        s.push_str(&format!(
            "| {} | {} | {add} | {del} |\n",
            code(&f.path),
            f.status
        ));
    }
    more(&mut s, files.len(), "files");
    Some(s)
}

/// The commands the task ran, in order: command line, exit code, duration. `None` when it ran
/// none.
pub(crate) fn commands_table(r: &RunResult) -> Option<String> {
    if r.commands.is_empty() {
        return None;
    }
    let mut s = String::from("| command | exit | time |\n|---|---|---|\n");
    for c in r.commands.iter().take(MAX_ROWS) {
        let exit = match (c.exit_code, c.timed_out) {
            (_, true) => "timed out".to_string(),
            (Some(code), _) => code.to_string(),
            (None, _) => "—".to_string(),
        };
        s.push_str(&format!(
            "| {} | {exit} | {:.1}s |\n",
            code(&c.command),
            c.duration_ms as f64 / 1000.0
        ));
    }
    more(&mut s, r.commands.len(), "commands");
    Some(s)
}

fn more(s: &mut String, n: usize, what: &str) {
    if n > MAX_ROWS {
        s.push_str(&format!("\n_… and {} more {what}_\n", n - MAX_ROWS));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::fixtures;

    #[test]
    fn lists_files_and_commands() {
        let r = fixtures::full_success();
        let files = files_table(&r).unwrap();
        assert!(
            files.contains("| `README.md` | modified | 1 | 1 |"),
            "{files}"
        );
        let commands = commands_table(&r).unwrap();
        assert!(
            commands.contains("| `cargo test` | 0 | 2.5s |"),
            "{commands}"
        );
    }

    #[test]
    fn nothing_done_is_no_table_and_cells_cannot_break_the_table() {
        let mut r = fixtures::result(crate::outcome::Outcome::new(
            crate::outcome::OutcomeKind::Success,
            "completed",
        ));
        assert_eq!(files_table(&r), None);
        assert_eq!(commands_table(&r), None);
        r.commands.push(crate::events::CommandRun {
            command: "echo a|b\nrm `x`".into(),
            exit_code: None,
            duration_ms: 10,
            timed_out: true,
        });
        let md = commands_table(&r).unwrap();
        assert!(
            md.contains("| ``echo a\\|b rm `x``` | timed out | 0.0s |"),
            "{md}"
        );
        r.commands = (0..60)
            .map(|i| crate::events::CommandRun {
                command: format!("echo {i}"),
                exit_code: Some(0),
                duration_ms: 1,
                timed_out: false,
            })
            .collect();
        let md = commands_table(&r).unwrap();
        assert!(
            md.contains("`echo 49`") && !md.contains("`echo 50`"),
            "{md}"
        );
        assert!(md.contains("_… and 10 more commands_"), "{md}");
    }
}
