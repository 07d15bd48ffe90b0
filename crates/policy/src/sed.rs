//! sed scripts, parsed the way GNU sed reads them, to find the commands that run programs,
//! write files or read other files: `e`, `s///e`, `w`, `W`, `s///w`, `r`, `R`, whatever address
//! (`/x/I`, `\%x%`, `0,/re/`, `first~step`, `addr,+N`) or `!` stands in front of them.
//!
//! Fail closed: a script the parser cannot follow to its end is reported as
//! [`SedEffect::Unparsed`], which every caller treats as the worst case.

/// Why a sed script cannot be followed (kept as `SedEffect::Unparsed`'s text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
struct SedError(String);

impl From<&str> for SedError {
    fn from(s: &str) -> Self {
        SedError(s.to_string())
    }
}

/// Something a sed script does besides editing the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SedEffect {
    /// Runs a shell command (`e`, or the `e` flag of `s`).
    Runs,
    /// Writes the named file (`w`, `W`, the `w` flag of `s`).
    Writes(String),
    /// Reads the named file (`r`, `R`).
    Reads(String),
    /// The script could not be parsed; why.
    Unparsed(String),
}

/// What `script` does besides editing the stream, in script order; empty for a plain editing
/// script (`s/a/b/g`, `1,5p`, `/x/d`).
pub fn effects(script: &str) -> Vec<SedEffect> {
    let mut p = Parser {
        s: script.as_bytes(),
        i: 0,
        out: Vec::new(),
    };
    if let Err(why) = p.script() {
        p.out.push(SedEffect::Unparsed(why.0));
    }
    p.out
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    out: Vec<SedEffect>,
}

type Step = Result<(), SedError>;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        Some(c)
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_separators(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b';')) {
            self.i += 1;
        }
    }

    /// The rest of the line (a file name, a label, a command), without the newline.
    fn rest_of_line(&mut self) -> String {
        let start = self.i;
        while !matches!(self.peek(), None | Some(b'\n')) {
            self.i += 1;
        }
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    fn script(&mut self) -> Step {
        loop {
            self.skip_separators();
            let Some(c) = self.peek() else {
                return Ok(());
            };
            if c == b'#' {
                self.rest_of_line();
                continue;
            }
            if c == b'}' {
                self.i += 1;
                continue;
            }
            self.address()?;
            self.skip_blanks();
            if self.peek() == Some(b',') {
                self.i += 1;
                self.skip_blanks();
                self.address2()?;
            }
            self.skip_blanks();
            while self.peek() == Some(b'!') {
                self.i += 1;
                self.skip_blanks();
            }
            self.command()?;
        }
    }

    /// A first address: `N`, `N~S`, `$`, `/re/FLAGS`, `\cREcFLAGS` (or none).
    fn address(&mut self) -> Step {
        match self.peek() {
            Some(b'0'..=b'9') => {
                self.number();
                if self.peek() == Some(b'~') {
                    self.i += 1;
                    if !matches!(self.peek(), Some(b'0'..=b'9')) {
                        return Err("`~` in an address needs a number".into());
                    }
                    self.number();
                }
                Ok(())
            }
            Some(b'$') => {
                self.i += 1;
                Ok(())
            }
            Some(b'/') => {
                self.i += 1;
                self.delimited(b'/')?;
                self.regex_flags();
                Ok(())
            }
            Some(b'\\') => {
                self.i += 1;
                let d = self.bump().ok_or("a `\\` address ends the script")?;
                if d == b'\n' || d == b'\\' {
                    return Err("a `\\` address has no usable delimiter".into());
                }
                self.delimited(d)?;
                self.regex_flags();
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The second address of a range: also `+N` and `~N`.
    fn address2(&mut self) -> Step {
        match self.peek() {
            Some(b'+' | b'~') => {
                self.i += 1;
                if !matches!(self.peek(), Some(b'0'..=b'9')) {
                    return Err("`+`/`~` in an address needs a number".into());
                }
                self.number();
                Ok(())
            }
            Some(b'0'..=b'9' | b'$' | b'/' | b'\\') => self.address(),
            _ => Err("a `,` is not followed by an address".into()),
        }
    }

    fn number(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }

    /// `I` and `M` after a regex address.
    fn regex_flags(&mut self) {
        while matches!(self.peek(), Some(b'I' | b'M')) {
            self.i += 1;
        }
    }

    /// Skip to the unescaped delimiter `d` (consumed). A newline inside is allowed only
    /// escaped, as GNU sed reads it.
    fn delimited(&mut self, d: u8) -> Step {
        loop {
            match self.bump() {
                None => return Err("a regular expression or replacement is not terminated".into()),
                Some(b'\\') => {
                    if self.bump().is_none() {
                        return Err("the script ends in a `\\`".into());
                    }
                }
                Some(b'\n') if d != b'\n' => {
                    return Err("a regular expression spans a line".into());
                }
                Some(c) if c == d => return Ok(()),
                Some(_) => {}
            }
        }
    }

    /// After a command: blanks, then `;`, newline, `}`, `#` or the end.
    fn end_of_command(&mut self) -> Step {
        self.skip_blanks();
        match self.peek() {
            None | Some(b';' | b'\n' | b'}' | b'#') => Ok(()),
            Some(c) => Err(SedError(format!(
                "unexpected `{}` after a command",
                char::from(c).escape_default()
            ))),
        }
    }

    fn command(&mut self) -> Step {
        let Some(c) = self.bump() else {
            return Err("an address is not followed by a command".into());
        };
        match c {
            b'{' => Ok(()),
            b'=' | b'd' | b'D' | b'g' | b'G' | b'h' | b'H' | b'n' | b'N' | b'p' | b'P' | b'x'
            | b'z' | b'F' => self.end_of_command(),
            b'l' | b'L' | b'q' | b'Q' => {
                self.skip_blanks();
                self.number();
                self.end_of_command()
            }
            b':' => {
                // A label: up to the end of the line or a `;`.
                while !matches!(self.peek(), None | Some(b'\n' | b';')) {
                    self.i += 1;
                }
                Ok(())
            }
            b'b' | b't' | b'T' | b'v' => {
                while !matches!(self.peek(), None | Some(b'\n' | b';' | b'}')) {
                    self.i += 1;
                }
                Ok(())
            }
            b'a' | b'i' | b'c' => {
                self.text();
                Ok(())
            }
            b'r' | b'R' => {
                self.skip_blanks();
                let f = self.rest_of_line();
                self.out.push(SedEffect::Reads(f));
                Ok(())
            }
            b'w' | b'W' => {
                self.skip_blanks();
                let f = self.rest_of_line();
                self.out.push(SedEffect::Writes(f));
                Ok(())
            }
            b'e' => {
                self.rest_of_line();
                self.out.push(SedEffect::Runs);
                Ok(())
            }
            b's' => self.substitute(),
            b'y' => {
                let d = self.bump().ok_or("`y` ends the script")?;
                if d == b'\n' || d == b'\\' {
                    return Err("`y` has no usable delimiter".into());
                }
                self.delimited(d)?;
                self.delimited(d)?;
                self.end_of_command()
            }
            other => Err(SedError(format!(
                "`{}` is not a sed command runner knows",
                char::from(other).escape_default()
            ))),
        }
    }

    /// The text of `a`, `i`, `c`: `a\` and following lines, or GNU's one-line `a text`; a line
    /// ending in `\` continues.
    fn text(&mut self) {
        loop {
            match self.bump() {
                None | Some(b'\n') => return,
                Some(b'\\') => {
                    self.bump();
                }
                Some(_) => {}
            }
        }
    }

    fn substitute(&mut self) -> Step {
        let d = self.bump().ok_or("`s` ends the script")?;
        if d == b'\n' || d == b'\\' {
            return Err("`s` has no usable delimiter".into());
        }
        self.delimited(d)?;
        self.delimited(d)?;
        loop {
            match self.peek() {
                Some(b'g' | b'p' | b'i' | b'I' | b'm' | b'M' | b'0'..=b'9') => self.i += 1,
                Some(b'e') => {
                    self.i += 1;
                    self.out.push(SedEffect::Runs);
                }
                Some(b'w') => {
                    self.i += 1;
                    self.skip_blanks();
                    let f = self.rest_of_line();
                    self.out.push(SedEffect::Writes(f));
                    return Ok(());
                }
                _ => return self.end_of_command(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs_or_writes(script: &str) -> bool {
        !effects(script).is_empty()
    }

    #[test]
    fn plain_scripts_have_no_effects() {
        for s in [
            "s/a/b/g",
            "1,5p",
            "/x/d",
            "$!N;P;D",
            "s|/usr|/opt|2p",
            "y/abc/xyz/",
            "/start/,/end/{s/a/b/;p}",
            "1~2d",
            "0,/re/s//x/",
            "2,+3d",
            "/a/I,~4p",
            "\\%x%Mp",
            ":a;N;$!ba;s/\\n/ /g",
            "1i\\\nheader line",
            "$a trailer; e id",
            "# comment e id\np",
            "l 40;q 3",
        ] {
            assert!(effects(s).is_empty(), "{s:?}: {:?}", effects(s));
        }
    }

    #[test]
    fn every_address_form_in_front_of_e_w_r_is_seen() {
        for s in [
            "e id",
            "1e id",
            "$e id",
            "/x/e id",
            "/x/Ie id",
            "/x/IMe id",
            "\\%x%e id",
            "\\%x%Ie id",
            "1,5e id",
            "1,/x/ e id",
            "0,/x/e id",
            "1~2e id",
            "2,+3e id",
            "2,~3e id",
            "/x/!e id",
            "/x/ ! e id",
            "1{e id\n}",
            "p;e id",
            "p\ne id",
            "s/a/b/e",
            "s/a/b/ge",
            "s|a|b|e",
            "s/a\\/x/b/e",
            "/x/s/a/b/2e",
            "w out",
            "/x/w out",
            "\\,x,W out",
            "s/a/b/w out",
            "s/a/b/gw out",
            "r /etc/passwd",
            "$R /etc/passwd",
            "1,$ r x",
        ] {
            assert!(runs_or_writes(s), "{s:?} was not seen");
        }
        assert_eq!(effects("/x/Ie id"), vec![SedEffect::Runs]);
        assert_eq!(
            effects("s/a/b/w out.txt"),
            vec![SedEffect::Writes("out.txt".into())]
        );
        assert_eq!(
            effects("1r /etc/passwd"),
            vec![SedEffect::Reads("/etc/passwd".into())]
        );
    }

    #[test]
    fn scripts_it_cannot_follow_are_reported() {
        for s in ["s/a/b", "/x", "1,", "\\", "k", "s/a/b/x", "y/a/", "1~x"] {
            assert!(
                effects(s)
                    .iter()
                    .any(|e| matches!(e, SedEffect::Unparsed(_))),
                "{s:?}: {:?}",
                effects(s)
            );
        }
    }
}
