//! runner on a terminal, through a pseudo-terminal rendered by a terminal emulator: the human
//! log format (one line per tool call, one per finished task), and the progress line, which
//! must never garble the answers printed on stdout or leave copies of itself behind.

use std::io::Read;
use std::os::fd::OwnedFd;
use std::process::Stdio;

use crate::support::*;
use serde_json::json;

/// Rows of the emulated terminal: more than the run prints, so nothing scrolls away.
const ROWS: u16 = 400;
const COLS: u16 = 160;

/// Run `cmd` with stdout and stderr on one pseudo-terminal and return the exit code and the
/// screen as the terminal shows it at the end, one string per row (trailing blanks trimmed).
fn on_terminal(mut cmd: std::process::Command) -> (Option<i32>, Vec<String>) {
    let size = nix::pty::Winsize {
        ws_row: ROWS,
        ws_col: COLS,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    let pty = nix::pty::openpty(&size, None).unwrap();
    let slave: OwnedFd = pty.slave;
    cmd.stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave));
    let mut child = cmd.spawn().unwrap();
    // The command holds the only copies of the slave now: reading ends when it exits.
    drop(cmd);
    let mut master = std::fs::File::from(pty.master);
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = master.read(&mut buf) {
            if n == 0 {
                break;
            }
            bytes.extend_from_slice(&buf[..n]);
        }
        bytes
    });
    let status = child.wait().unwrap();
    let bytes = reader.join().unwrap();
    let nz = |n: u16| std::num::NonZeroU16::new(n).unwrap();
    let mut parser = vt100::Parser::new(nz(ROWS), nz(COLS), 0);
    parser.process(&bytes);
    let rows = parser
        .screen()
        .contents()
        .lines()
        .map(|l| l.trim_end().to_string())
        .collect();
    (status.code(), rows)
}

/// Three tasks, each running a short command and answering; `runner exec` in `repo` with
/// text output on the terminal.
fn batch_on_terminal() -> (Option<i32>, Vec<String>) {
    let repo = TestRepo::new();
    let mut turns = Vec::new();
    for i in 1..=3 {
        turns.push(tool_turn(
            &format!("toolu_{i}"),
            "Bash",
            json!({"command": "sleep 0.3"}),
        ));
        turns.push(text_turn(&format!("answer number {i}")));
    }
    let mock = MockAnthropic::start(turns);
    for i in 1..=3 {
        write_spec_named(
            repo.path(),
            &format!("t{i}.yaml"),
            &format!("name: task-{i}\nprompt: go\n"),
        );
    }
    let out = OutDir::new();
    let mut cmd = runner_std_cmd();
    for (k, v) in mock.runner_env() {
        cmd.env(k, v);
    }
    cmd.env_remove("GITHUB_ACTIONS")
        .current_dir(repo.path())
        .args([
            "exec",
            "--allowed-tools",
            "Bash(sleep:*)",
            "--transcript-dir",
        ])
        .arg(out.transcripts())
        .args(["t1.yaml", "t2.yaml", "t3.yaml"]);
    let got = on_terminal(cmd);
    mock.assert_clean();
    got
}

#[test]
fn answers_and_the_progress_line_never_garble_each_other() {
    let (code, rows) = batch_on_terminal();
    let screen = rows.join("\n");
    assert_eq!(code, Some(0), "{screen}");
    for i in 1..=3 {
        // Each block header and answer is a line of its own, untouched by the status line.
        let header = format!("== task-{i} (success) ==");
        assert_eq!(
            rows.iter().filter(|r| r.contains(&header)).count(),
            1,
            "{screen}"
        );
        assert!(rows.contains(&header), "garbled header:\n{screen}");
        let answer = format!("answer number {i}");
        assert!(rows.contains(&answer), "garbled answer:\n{screen}");
    }
    // The status line leaves one final copy, not one per stdout block.
    let status: Vec<&String> = rows.iter().filter(|r| r.contains("done ·")).collect();
    assert_eq!(status.len(), 1, "{screen}");
    assert!(
        status[0].starts_with("runner: 3/3 done · 0 running · 3 passed"),
        "{screen}"
    );
}

#[test]
fn the_log_reads_as_one_line_per_tool_call_and_per_task() {
    let (code, rows) = batch_on_terminal();
    let screen = rows.join("\n");
    assert_eq!(code, Some(0), "{screen}");
    // No timestamps, no levels on ordinary lines.
    assert!(!screen.contains(" INFO "), "{screen}");
    let calls: Vec<&String> = rows
        .iter()
        .filter(|r| r.starts_with("  ✓ Bash  sleep 0.3  ("))
        .collect();
    assert_eq!(calls.len(), 3, "{screen}");
    for i in 1..=3 {
        let done = format!("✓ task-{i}: success · 2 turns · ");
        assert!(rows.iter().any(|r| r.starts_with(&done)), "{screen}");
    }
}
