//! "What it did": a task's footprint for a reviewer — the files it changed (with lines added
//! and removed), the commands it ran (with exit codes and durations) and the calls denied —
//! from the result alone, without opening the transcript or another model call.

use crate::events::RunResult;

/// Most rows of each list in the Markdown section.
const MAX_ROWS: usize = 50;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// A command line for a table cell: one line, at most 120 characters, in a code span.
fn code(s: &str) -> String {
    let one: String = cell(s).chars().take(120).collect();
    let cut = if one.chars().count() < cell(s).chars().count() {
        "…"
    } else {
        ""
    };
    let ticks = if one.contains('`') { "``" } else { "`" };
    format!("{ticks}{one}{cut}{ticks}")
}

/// The Markdown section for one task (the step summary's per-task details): empty when the
/// task changed nothing, ran nothing and was denied nothing.
pub fn markdown(r: &RunResult) -> String {
    let files = r.git.as_ref().map(|g| g.files.as_slice()).unwrap_or(&[]);
    if files.is_empty() && r.commands.is_empty() && r.permission_denials.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "\n<details><summary>{} — what it did</summary>\n\n",
        cell(&r.task_name)
    );
    if !files.is_empty() {
        s.push_str("| file | change | + | − |\n|---|---|---|---|\n");
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
        s.push('\n');
    }
    if !r.commands.is_empty() {
        s.push_str("| command | exit | time |\n|---|---|---|\n");
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
        s.push('\n');
    }
    if !r.permission_denials.is_empty() {
        s.push_str("| denied | why |\n|---|---|\n");
        for d in r.permission_denials.iter().take(MAX_ROWS) {
            let what = match d.tool_input.get("command").and_then(|c| c.as_str()) {
                Some(cmd) => format!("{} {}", d.tool_name, code(cmd)),
                None => cell(&d.tool_name),
            };
            s.push_str(&format!("| {what} | {} |\n", cell(&d.reason)));
        }
        more(&mut s, r.permission_denials.len(), "denials");
        s.push('\n');
    }
    s.push_str("</details>\n");
    s
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
    fn lists_files_commands_and_denials() {
        let r = fixtures::full_success();
        let md = markdown(&r);
        assert!(
            md.contains("<summary>fix-typo — what it did</summary>"),
            "{md}"
        );
        assert!(md.contains("| `README.md` | modified | 1 | 1 |"), "{md}");
        assert!(md.contains("| `cargo test` | 0 | 2.5s |"), "{md}");
        assert!(
            md.contains("| Bash `rm -rf /` | no allow rule matches Bash(rm -rf /) |"),
            "{md}"
        );
    }

    #[test]
    fn nothing_done_is_no_section_and_cells_cannot_break_the_table() {
        let mut r = fixtures::result(crate::outcome::Outcome::new(
            crate::outcome::OutcomeKind::Success,
            "completed",
        ));
        assert_eq!(markdown(&r), "");
        r.commands.push(crate::events::CommandRun {
            command: "echo a|b\nrm `x`".into(),
            exit_code: None,
            duration_ms: 10,
            timed_out: true,
        });
        let md = markdown(&r);
        assert!(
            md.contains("| ``echo a\\|b rm `x``` | timed out | 0.0s |"),
            "{md}"
        );
    }
}
