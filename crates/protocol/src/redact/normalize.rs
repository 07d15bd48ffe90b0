//! The normalized view of a text that the encoded-form search runs on: separators dropped,
//! ASCII letters lower-cased, dump offsets skipped.
//!
//! Normalizing lets one pattern find a secret however it was spaced, wrapped or cased: `h u n
//! t e r`, one character per line, `fold -w 12`, `HUNTER`, `"h","u"`, `\150\145`, `od -c`.
//! Patterns (the secret's forms) go through the same function, so a secret that itself holds a
//! separator still matches. Each byte kept is emitted with its offset in the original text,
//! so a match maps back to the original span (separators inside it included).
//!
//! What is dropped:
//! - whitespace (space, tab, newline, carriage return, vertical tab, form feed) and the
//!   separators `,` `;` `:` `\` `"` `'` and backquote;
//! - the escapes `\n`, `\r`, `\t` as a whole (two bytes): a JSON or C string of the text then
//!   normalizes like the text itself;
//! - a dump's line offset: at the start of a line (the text's start, after a newline, after a
//!   `\n` escape or after a `"`), 7 hexadecimal digits and a space (`od`), or 8 and a `:`
//!   (`xxd`) or two spaces (`hexdump -C`). Only in texts, never in patterns.

/// What normalization does with a byte.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Kept (lower-cased).
    Keep,
    /// Dropped.
    Sep,
    /// Dropped; the next byte starts a line.
    LineEnd,
    /// `\`: dropped, with the next byte when that is `n`, `r` or `t`.
    Backslash,
}

/// The class of every byte.
static CLASS: [Class; 256] = {
    let mut t = [Class::Keep; 256];
    let seps = [
        b' ', b'\t', b'\r', 0x0b, 0x0c, b',', b';', b':', b'\'', b'`',
    ];
    let mut i = 0;
    while i < seps.len() {
        t[seps[i] as usize] = Class::Sep;
        i += 1;
    }
    t[b'\n' as usize] = Class::LineEnd;
    t[b'"' as usize] = Class::LineEnd;
    t[b'\\' as usize] = Class::Backslash;
    t
};

/// Call `emit(byte, offset)` for each byte of `input`'s normalized view, in order, with the
/// byte's offset in `input`. `skip_offsets`: skip dump line offsets (for texts, not patterns).
#[inline]
pub(super) fn walk(input: &[u8], skip_offsets: bool, mut emit: impl FnMut(u8, usize)) {
    let n = input.len();
    let mut i = 0;
    let mut line_start = skip_offsets;
    while i < n {
        if line_start {
            line_start = false;
            if let Some(len) = dump_offset(&input[i..]) {
                i += len;
                continue;
            }
        }
        let b = input[i];
        match CLASS[b as usize] {
            Class::Keep => {
                emit(b.to_ascii_lowercase(), i);
                i += 1;
            }
            Class::Sep => i += 1,
            Class::LineEnd => {
                line_start = skip_offsets;
                i += 1;
            }
            Class::Backslash => match input.get(i + 1) {
                Some(b'n') => {
                    line_start = skip_offsets;
                    i += 2;
                }
                Some(b'r' | b't') => i += 2,
                _ => i += 1,
            },
        }
    }
}

/// The length of the dump offset at the start of `line` (the digits and the separator after
/// them), if it starts with one: 7 hexadecimal digits and a space (`od`), or 8 and a `:`
/// (`xxd`) or two spaces (`hexdump -C`).
#[inline]
fn dump_offset(line: &[u8]) -> Option<usize> {
    let digits = line
        .iter()
        .take(9)
        .take_while(|b| b.is_ascii_hexdigit())
        .count();
    match (digits, line.get(digits), line.get(digits + 1)) {
        (7, Some(b' '), _) | (8, Some(b':'), _) => Some(digits + 1),
        (8, Some(b' '), Some(b' ')) => Some(digits + 2),
        _ => None,
    }
}

/// The normalized form of a pattern (no dump offsets skipped).
pub(super) fn pattern(p: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.len());
    walk(p, false, |b, _| out.push(b));
    out
}

/// The normalized view of a text: what [`walk`] emits, built run by run (the common case,
/// bytes kept, is one lower-casing copy).
pub(super) fn text(t: &[u8]) -> Vec<u8> {
    let n = t.len();
    let mut out = Vec::with_capacity(n);
    let mut i = 0;
    let mut line_start = true;
    while i < n {
        if line_start {
            line_start = false;
            if let Some(len) = dump_offset(&t[i..]) {
                i += len;
                continue;
            }
        }
        let start = i;
        while i < n && CLASS[t[i] as usize] == Class::Keep {
            i += 1;
        }
        out.extend(t[start..i].iter().map(u8::to_ascii_lowercase));
        let Some(&b) = t.get(i) else { break };
        match CLASS[b as usize] {
            Class::Keep | Class::Sep => i += 1,
            Class::LineEnd => {
                line_start = true;
                i += 1;
            }
            Class::Backslash => match t.get(i + 1) {
                Some(b'n') => {
                    line_start = true;
                    i += 2;
                }
                Some(b'r' | b't') => i += 2,
                _ => i += 1,
            },
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str) -> String {
        String::from_utf8(text(s.as_bytes())).unwrap()
    }

    #[test]
    fn separators_case_and_escapes_go() {
        assert_eq!(norm("H u\nN,t;E:r\t2'2\"x`y\\z"), "hunter22xyz");
        assert_eq!(norm("a\\nb\\rc\\td\\x41"), "abcdx41");
        assert_eq!(norm("é Ü"), "éÜ");
    }

    #[test]
    fn dump_offsets_at_line_starts_go() {
        let od = "0000000   h   u   n   t\n0000004   e   r\n0000006\n";
        assert_eq!(norm(od), "hunter0000006");
        assert_eq!(norm("00000000: 6865 6c6c  hell"), "68656c6chell");
        // Not at a line start, or not 7-8 digits: kept.
        assert_eq!(norm("x 0000000 a"), "x0000000a");
        assert_eq!(norm("123456 a\n123456789 b"), "123456a123456789b");
        assert_eq!(norm("12345678 a\n00000010  68 65"), "12345678a6865");
        // In a JSON string: after the opening quote and after `\n`.
        assert_eq!(norm("\"0000000 a\\n0000001 b\""), "ab");
        // Patterns keep them.
        assert_eq!(pattern(b"0000000 a"), b"0000000a");
    }

    proptest::proptest! {
        /// The run-by-run text view is what the byte-by-byte walk emits.
        #[test]
        fn text_equals_the_walk(t in proptest::collection::vec(proptest::sample::select(
            b"aZ09 \n\t,;:\\\"'`nrtx\xc3\xa9".to_vec()), 0..200)) {
            let mut walked = Vec::new();
            walk(&t, true, |b, _| walked.push(b));
            proptest::prop_assert_eq!(text(&t), walked);
        }
    }

    #[test]
    fn offsets_point_into_the_original() {
        let mut got = Vec::new();
        walk(b"A b\\nc", true, |b, i| got.push((b, i)));
        assert_eq!(got, vec![(b'a', 0), (b'b', 2), (b'c', 5)]);
    }
}
