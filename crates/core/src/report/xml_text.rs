//! Making arbitrary text (model output, tool output with colours) safe for XML 1.0.
//!
//! `strip-ansi-escapes` would also drop tabs and carriage returns, so this is a small filter of
//! its own: it removes ANSI escape sequences (CSI, OSC, other `ESC x` pairs, 8-bit CSI) and
//! every character XML 1.0 does not allow, and keeps `\t`, `\n`, `\r`.

/// Whether XML 1.0 allows `c` in a document (`Char` production).
pub(crate) fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

/// `s` without ANSI escape sequences and without characters invalid in XML 1.0.
pub(crate) fn sanitize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => match chars.peek().copied() {
                // CSI: ESC [ params/intermediates, then a final byte 0x40..=0x7E.
                Some('[') => {
                    chars.next();
                    skip_csi(&mut chars);
                }
                // OSC (and DCS/SOS/PM/APC strings): up to BEL or ESC \.
                Some(']' | 'P' | 'X' | '^' | '_') => {
                    chars.next();
                    skip_string(&mut chars);
                }
                // Two-character escapes (ESC 7, ESC c, ESC ( B: one intermediate allowed).
                Some(n) if ('\u{20}'..='\u{2f}').contains(&n) => {
                    chars.next();
                    chars.next();
                }
                Some(n) if ('\u{30}'..='\u{7e}').contains(&n) => {
                    chars.next();
                }
                _ => {}
            },
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' => skip_string(&mut chars),
            // C1 controls are valid XML but never meaningful text.
            '\u{80}'..='\u{9f}' => {}
            c if is_xml_char(c) => out.push(c),
            _ => {}
        }
    }
    out
}

fn skip_csi(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    for c in chars.by_ref() {
        if ('\u{40}'..='\u{7e}').contains(&c) {
            break;
        }
        // A non-CSI character ends a malformed sequence; drop it with the sequence.
        if !('\u{20}'..='\u{3f}').contains(&c) {
            break;
        }
    }
}

fn skip_string(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => break,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                break;
            }
            _ => {}
        }
    }
}

/// At most `max` bytes of `s` (cut at a char boundary), with a note of how much was cut.
pub fn truncate(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[... truncated {} bytes]", &s[..end], s.len() - end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_colours_and_keeps_layout() {
        assert_eq!(
            sanitize("\u{1b}[1;31merror\u{1b}[0m:\tbad\r\nnext"),
            "error:\tbad\r\nnext"
        );
    }

    #[test]
    fn strips_osc_hyperlinks_and_bell() {
        assert_eq!(
            sanitize("a\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{1b}\\b\u{7}c"),
            "alinkbc"
        );
    }

    #[test]
    fn drops_xml_invalid_characters() {
        assert_eq!(sanitize("a\u{0}b\u{8}c\u{b}d\u{fffe}e\u{85}f"), "abcdef");
        assert_eq!(sanitize("<&>]]> ok ✓ 😀"), "<&>]]> ok ✓ 😀");
    }

    #[test]
    fn truncate_respects_char_boundaries() {
        assert_eq!(truncate("abc", 3), "abc");
        let t = truncate("ééé", 3);
        assert_eq!(t, "é\n[... truncated 4 bytes]");
    }
}
