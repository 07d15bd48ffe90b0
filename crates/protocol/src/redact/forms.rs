//! The forms a secret may take in output, as patterns.
//!
//! Two sets. **Exact** patterns are searched in the text as it is: the value itself (any
//! length from [`MIN_SECRET_LEN`]), each line of a multi-line value, and for a value
//! shorter than [`MIN_ENCODED_LEN`] the case-exact encodings that are at least that long
//! (base64, hex, URL encoding). **Folded** forms ([`Folded`]) are searched in the text's
//! normalized view ([`super::normalize`]), for the value and each line of a multi-line value
//! of at least [`MIN_ENCODED_LEN`] bytes: itself, reversed, rot13, base64 (standard and URL
//! alphabets, at each of the three alignments a value can have inside a longer encoded text),
//! base32 (at each of its five alignments), hex, decimal and octal byte codes, `\x68`/`0x68`
//! byte escapes and URL encodings. A single line of at least [`MIN_HALVES_LEN`] bytes is also
//! found by its halves: any contiguous piece of a form at least as long as the shortest
//! ⌈len/2⌉-byte window of the value ([`windows`]) takes in that form.

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};

use super::normalize;

/// Values shorter than this are never redacted: redacting `"1"` or `"ab"` would mangle
/// every output while protecting nothing.
pub const MIN_SECRET_LEN: usize = 4;

/// A value (or a line of one) shorter than this, in bytes, is matched only exactly: its
/// spaced, cased, reversed or encoded forms would match unrelated text.
pub const MIN_ENCODED_LEN: usize = 8;

/// A value (or a line of one) at least this long, in bytes, is also matched by its halves:
/// every window of ⌈len/2⌉ bytes (so at least 12), see [`windows`].
pub const MIN_HALVES_LEN: usize = 24;

/// The exact patterns of `value`: the value, each line of a multi-line value (trimmed, at
/// least [`MIN_ENCODED_LEN`] bytes), and for a short value its case-exact encodings.
pub(super) fn exact(value: &str) -> Vec<Vec<u8>> {
    let mut out = vec![value.as_bytes().to_vec()];
    if value.contains('\n') {
        out.extend(
            value
                .lines()
                .map(str::trim)
                .filter(|l| l.len() >= MIN_ENCODED_LEN)
                .map(|l| l.as_bytes().to_vec()),
        );
    }
    if value.len() < MIN_ENCODED_LEN {
        let bytes = value.as_bytes();
        let mut enc = base64_cores(bytes);
        enc.push(STANDARD.encode(bytes));
        enc.push(URL_SAFE.encode(bytes));
        let hex = hex(bytes);
        enc.push(hex.to_ascii_uppercase());
        enc.push(hex);
        enc.extend(url_encodings(value));
        out.extend(
            enc.into_iter()
                .filter(|e| e.len() >= MIN_ENCODED_LEN)
                .map(String::into_bytes),
        );
    }
    dedup(out)
}

/// A folded form of a secret: normalized, and the shortest piece of it that is redacted on
/// its own (the whole form, or for a value of at least [`MIN_HALVES_LEN`] bytes the length
/// of the shortest half of the value in this form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Folded {
    /// The form, normalized ([`normalize::pattern`]).
    pub(super) form: Vec<u8>,
    /// The shortest contiguous piece of `form` that is redacted (at least
    /// [`MIN_ENCODED_LEN`], at most `form.len()`).
    pub(super) min: usize,
}

/// The folded forms of `value`: every form of the value and of each line of a multi-line
/// value (each at least [`MIN_ENCODED_LEN`] bytes), normalized. None for a shorter value.
pub(super) fn folded(value: &str) -> Vec<Folded> {
    let mut units = vec![value];
    if value.contains('\n') {
        units.extend(value.lines().map(str::trim));
    }
    let mut out: Vec<Folded> = Vec::new();
    for u in units.into_iter().filter(|u| u.len() >= MIN_ENCODED_LEN) {
        for f in unit_forms(u) {
            match out.iter_mut().find(|o| o.form == f.form) {
                Some(o) => o.min = o.min.min(f.min),
                None => out.push(f),
            }
        }
    }
    out
}

/// How the forms of a piece relate to the forms of the whole value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Encoded byte by byte (or character by character): a piece's form is a substring.
    Each,
    /// A base64 core: a piece's core is a substring of one of the value's three.
    Base64,
    /// A base32 core: a piece's core is a substring of one of the value's five.
    Base32,
    /// A padded whole encoding: matched whole only.
    Whole,
}

/// The folded forms of one unit (the value or one line), with their minimum pieces.
fn unit_forms(u: &str) -> Vec<Folded> {
    let whole: Vec<(Family, Vec<u8>)> = piece_forms(u)
        .into_iter()
        .map(|(fam, f)| (fam, normalize::pattern(f.as_bytes())))
        .collect();
    let mut min: Vec<usize> = whole.iter().map(|(_, f)| f.len()).collect();
    if !u.contains('\n') && u.len() >= MIN_HALVES_LEN {
        if u.len() > MAX_HALVES_EXACT {
            // Too long to measure every half: a quarter of each form.
            for (k, (fam, f)) in whole.iter().enumerate() {
                if *fam != Family::Whole {
                    min[k] = f.len() / 4;
                }
            }
        } else {
            let mut fam_min = [usize::MAX; 2];
            for w in windows(u) {
                for (k, (fam, f)) in piece_forms(w).into_iter().enumerate() {
                    let len = normalize::pattern(f.as_bytes()).len();
                    match fam {
                        Family::Each => min[k] = min[k].min(len),
                        Family::Base64 => fam_min[0] = fam_min[0].min(len),
                        Family::Base32 => fam_min[1] = fam_min[1].min(len),
                        Family::Whole => {}
                    }
                }
            }
            for (k, (fam, _)) in whole.iter().enumerate() {
                match fam {
                    Family::Base64 => min[k] = min[k].min(fam_min[0]),
                    Family::Base32 => min[k] = min[k].min(fam_min[1]),
                    Family::Each | Family::Whole => {}
                }
            }
        }
    }
    whole
        .into_iter()
        .zip(min)
        .filter(|((_, f), _)| f.len() >= MIN_ENCODED_LEN)
        .map(|((_, form), m)| Folded {
            min: m.clamp(MIN_ENCODED_LEN, form.len()),
            form,
        })
        .collect()
}

/// A single-line value longer than this, in bytes, has its halves found as pieces of a
/// quarter of each form (measuring every half would cost its length squared).
const MAX_HALVES_EXACT: usize = 1024;

/// The halves of `unit` when it is at least [`MIN_HALVES_LEN`] bytes long: its windows of
/// ⌈len/2⌉ bytes at every offset (widened to character boundaries).
pub(super) fn windows(unit: &str) -> Vec<&str> {
    let len = unit.len();
    if len < MIN_HALVES_LEN {
        return Vec::new();
    }
    let h = len.div_ceil(2);
    let mut out: Vec<&str> = Vec::with_capacity(len - h + 1);
    for s in 0..=len - h {
        let mut a = s;
        while !unit.is_char_boundary(a) {
            a -= 1;
        }
        let mut b = (s + h).min(len);
        while !unit.is_char_boundary(b) {
            b += 1;
        }
        let w = &unit[a..b];
        if out.last() != Some(&w) {
            out.push(w);
        }
    }
    out
}

/// Every form of one piece, before normalization, with its family; the same forms in the
/// same order for every piece of at least 12 bytes.
fn piece_forms(piece: &str) -> Vec<(Family, String)> {
    use Family::{Base32, Base64, Each, Whole};
    let bytes = piece.as_bytes();
    let [url_all, url_reserved] = url_encodings(piece);
    let mut out = vec![
        (Each, piece.to_string()),
        (Each, piece.chars().rev().collect()),
        (Each, rot13(piece)),
        (Each, hex(bytes)),
        (Each, bytes.iter().map(|b| b.to_string()).collect()),
        (Each, bytes.iter().map(|b| format!("{b:03o}")).collect()),
        (Each, bytes.iter().map(|b| format!("x{b:02x}")).collect()),
        (Each, bytes.iter().map(|b| format!("0x{b:02x}")).collect()),
        (Each, bytes.iter().map(|b| format!("%{b:02x}")).collect()),
        (Each, url_all),
        (Each, url_reserved),
        (Whole, STANDARD.encode(bytes)),
        (Whole, URL_SAFE.encode(bytes)),
        (Whole, base32(bytes, true)),
    ];
    out.extend(base64_cores(bytes).into_iter().map(|c| (Base64, c)));
    out.extend(base32_cores(bytes).into_iter().map(|c| (Base32, c)));
    out
}

/// ROT13 of the ASCII letters of `s`.
pub(super) fn rot13(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            'a'..='m' | 'A'..='M' => (c as u8 + 13) as char,
            'n'..='z' | 'N'..='Z' => (c as u8 - 13) as char,
            _ => c,
        })
        .collect()
}

/// Lower-case hex of `bytes`.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What URL encoders escape: everything but RFC 3986's unreserved characters.
const URL_RESERVED: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// `value` URL-encoded the two common ways (every non-alphanumeric byte; RFC 3986's reserved
/// bytes).
fn url_encodings(value: &str) -> [String; 2] {
    [
        percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC)
            .to_string(),
        percent_encoding::utf8_percent_encode(value, URL_RESERVED).to_string(),
    ]
}

/// The base64 characters that depend on `bytes` alone, at each of the three offsets `bytes`
/// can start at inside a longer encoded text, in the standard and URL alphabets.
fn base64_cores(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::with_capacity(6);
    for pad in 0..3usize {
        let mut buf = vec![0u8; pad];
        buf.extend_from_slice(bytes);
        let full = (buf.len() / 3) * 4;
        let skip = if pad == 0 { 0 } else { 4 };
        if full > skip {
            let std = STANDARD_NO_PAD.encode(&buf);
            let url = URL_SAFE_NO_PAD.encode(&buf);
            out.push(std[skip..full].to_string());
            out.push(url[skip..full].to_string());
        }
    }
    out
}

/// The base32 characters that depend on `bytes` alone, at each of the five offsets `bytes`
/// can start at inside a longer encoded text.
fn base32_cores(bytes: &[u8]) -> Vec<String> {
    let mut out = Vec::with_capacity(5);
    for pad in 0..5usize {
        let mut buf = vec![0u8; pad];
        buf.extend_from_slice(bytes);
        let full = (buf.len() / 5) * 8;
        let skip = if pad == 0 { 0 } else { 8 };
        if full > skip {
            out.push(base32(&buf, false)[skip..full].to_string());
        }
    }
    out
}

/// RFC 4648 base32 of `bytes` (upper case), with `=` padding when `padded`.
pub(super) fn base32(bytes: &[u8], padded: bool) -> String {
    const ALPHABET: &[u8; 32] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let mut out = String::with_capacity(bytes.len().div_ceil(5) * 8);
    for chunk in bytes.chunks(5) {
        let mut group = [0u8; 5];
        group[..chunk.len()].copy_from_slice(chunk);
        let bits = group.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let chars = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < chars {
                out.push(ALPHABET[((bits >> (35 - 5 * i)) & 31) as usize] as char);
            } else if padded {
                out.push('=');
            }
        }
    }
    out
}

/// `v` without repeated patterns (the first kept), in order.
fn dedup(v: Vec<Vec<u8>>) -> Vec<Vec<u8>> {
    let mut seen = std::collections::HashSet::with_capacity(v.len());
    v.into_iter().filter(|p| seen.insert(p.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base32_matches_rfc_4648() {
        for (plain, enc) in [
            ("", ""),
            ("f", "MY======"),
            ("fo", "MZXQ===="),
            ("foo", "MZXW6==="),
            ("foob", "MZXW6YQ="),
            ("fooba", "MZXW6YTB"),
            ("foobar", "MZXW6YTBOI======"),
        ] {
            assert_eq!(base32(plain.as_bytes(), true), enc, "{plain}");
        }
        assert_eq!(base32(b"foobar", false), "MZXW6YTBOI");
    }

    #[test]
    fn halves_cover_every_window_of_a_short_value() {
        assert!(windows("abcdefghijklmnopqrstuvw").is_empty());
        let v = "abcdefghijklmnopqrstuvwxyz";
        let w = windows(v);
        assert_eq!(w.len(), 14);
        assert!(w.iter().all(|x| x.len() == 13));
        assert_eq!((w[0], w[13]), ("abcdefghijklm", "nopqrstuvwxyz"));
        // Character boundaries: windows widen to whole characters.
        let wide = "é".repeat(20);
        assert!(windows(&wide).iter().all(|x| x.len() >= 20));
    }

    #[test]
    fn short_values_have_no_folded_forms() {
        assert!(folded("abcdefg").is_empty());
        let f = folded("abcdefgh");
        assert!(!f.is_empty() && f.iter().all(|f| f.min == f.form.len()));
        assert!(exact("abcd").contains(&b"YWJjZA==".to_vec()));
    }

    #[test]
    fn halves_set_the_minimum_piece() {
        let v = "abcdefghijklmnopqrstuvwxyz";
        let f = folded(v);
        let raw = f.iter().find(|f| f.form == v.as_bytes()).unwrap();
        assert_eq!(raw.min, 13);
        let hex = f
            .iter()
            .find(|f| f.form == hex(v.as_bytes()).as_bytes())
            .unwrap();
        assert_eq!(hex.min, 26);
        // Below MIN_HALVES_LEN: whole forms only.
        assert!(folded(&v[..23]).iter().all(|f| f.min == f.form.len()));
    }
}
