//! Whitespace-separated tokens with their line numbers (ns-3 reads these files with `>>`, so
//! line breaks carry no meaning, but error messages should still point at a line).

use fabricsim_core::error::{CoreError, InputError, Source};

pub struct Tokens<'a> {
    src: &'a Source,
    toks: Vec<(usize, &'a str)>,
    pos: usize,
}

impl<'a> Tokens<'a> {
    pub fn new(src: &'a Source) -> Tokens<'a> {
        let toks = src
            .text
            .lines()
            .enumerate()
            .flat_map(|(i, l)| l.split_whitespace().map(move |t| (i + 1, t)))
            .collect();
        Tokens { src, toks, pos: 0 }
    }

    /// The line of the next token (or of the end of the file).
    pub fn line(&self) -> usize {
        self.toks
            .get(self.pos)
            .map(|t| t.0)
            .unwrap_or_else(|| self.src.text.lines().count().max(1))
    }

    /// The next token, or an error naming the field that is missing.
    pub fn next(&mut self, field: &str, allowed: &str) -> Result<(usize, &'a str), InputError> {
        match self.toks.get(self.pos) {
            Some(&t) => {
                self.pos += 1;
                Ok(t)
            }
            None => Err(InputError::at_line(
                self.src,
                self.line(),
                field,
                "(end of file)",
                "the file ends early",
                allowed,
            )),
        }
    }

    /// The next token parsed with `parse`; errors name the field, value and what is allowed.
    pub fn parse<T, E: std::fmt::Display>(
        &mut self,
        field: &str,
        allowed: &str,
        parse: impl Fn(&str) -> Result<T, E>,
    ) -> Result<(usize, T), InputError> {
        let (line, t) = self.next(field, allowed)?;
        parse(t)
            .map(|v| (line, v))
            .map_err(|p| InputError::at_line(self.src, line, field, t, p, allowed))
    }

    /// Tokens not read yet.
    pub fn left(&self) -> usize {
        self.toks.len() - self.pos
    }

    pub fn rest(&self) -> Option<(usize, &'a str)> {
        self.toks.get(self.pos).copied()
    }
}

pub fn parse_u64(s: &str) -> Result<u64, CoreError> {
    s.parse::<u64>()
        .map_err(|_| CoreError::Value("not a non-negative integer".into()))
}
