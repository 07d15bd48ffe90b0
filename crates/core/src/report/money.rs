//! How a cost in USD reads for people: `$0.0099`, rounded to 4 decimals. Log lines, the
//! progress line, the step summary and messages use it; JSON outputs (result.json,
//! stream-json, transcripts) keep the exact value.

/// `c` as dollars rounded to 4 decimals (`0.009855000000000001` reads `$0.0099`); a value that
/// rounds to zero reads `$0.0000`, never `-$0.0000`, and a non-finite one reads `unknown`.
pub fn usd(c: f64) -> String {
    if !c.is_finite() {
        return "unknown".to_string();
    }
    let rounded = (c * 10_000.0).round() / 10_000.0;
    // `+ 0.0` turns a negative zero into a positive one.
    format!("${:.4}", rounded + 0.0)
}

/// [`usd`] for a cost that may be unknown (an unpriced model, a replay): `unknown` then.
pub fn usd_or_unknown(c: Option<f64>) -> String {
    c.map_or_else(|| "unknown".to_string(), usd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_to_four_decimals() {
        assert_eq!(usd(0.009855000000000001), "$0.0099");
        assert_eq!(usd(0.0125), "$0.0125");
        assert_eq!(usd(6.0), "$6.0000");
        assert_eq!(usd(1234.56789), "$1234.5679");
    }

    #[test]
    fn zero_and_odd_values() {
        assert_eq!(usd(-0.00001), "$0.0000");
        assert_eq!(usd(f64::NAN), "unknown");
        assert_eq!(usd(f64::INFINITY), "unknown");
        assert_eq!(usd_or_unknown(None), "unknown");
        assert_eq!(usd_or_unknown(Some(0.00005)), "$0.0001");
    }
}
