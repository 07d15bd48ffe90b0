//! The `runner resume ...` command that continues a task stopped by a turn, token, cost or time
//! limit: said on stderr and at the end of the text result. Budgets count the whole run, so
//! the command raises the limit that stopped it (to twice what was spent).

use std::path::Path;

use crate::events::RunResult;
use crate::outcome::OutcomeKind;

/// The default `--transcript-dir`, where `runner resume SESSION_ID` looks.
const DEFAULT_TRANSCRIPT_DIR: &str = ".runner";

/// The command continuing `r`, when a limit stopped it and its transcript was written.
pub(super) fn resume_command(r: &RunResult, transcript_dir: &Path) -> Option<String> {
    r.transcript_path.as_ref()?;
    let raise = match r.outcome.kind {
        OutcomeKind::MaxTurns => {
            format!(" --max-turns {}", (r.num_turns * 2).max(r.num_turns + 10))
        }
        OutcomeKind::BudgetTokens => {
            let u = &r.usage;
            let spent = u.input_tokens
                + u.output_tokens
                + u.cache_creation_input_tokens
                + u.cache_read_input_tokens;
            format!(" --max-total-tokens {}", spent.saturating_mul(2).max(1))
        }
        OutcomeKind::BudgetCost => {
            let spent = r.total_cost_usd.unwrap_or(0.0);
            format!(" --max-cost-usd {:.2}", (spent * 2.0).max(0.01))
        }
        // A resumed run's timeout is for the resumed part.
        OutcomeKind::Timeout => String::new(),
        _ => return None,
    };
    let id = r.session_id.get(..8).unwrap_or(&r.session_id);
    let dir = if transcript_dir == Path::new(DEFAULT_TRANSCRIPT_DIR) {
        String::new()
    } else {
        format!(
            " --transcript-dir {}",
            shell_quote(&transcript_dir.display().to_string())
        )
    };
    Some(format!("runner resume {id}{dir}{raise}"))
}

/// `s` as one shell word.
fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+:,=@".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_when_needed() {
        assert_eq!(shell_quote("/tmp/out"), "/tmp/out");
        assert_eq!(shell_quote("a b'c"), r"'a b'\''c'");
    }
}
