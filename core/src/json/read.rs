//! Reading JSON text strictly: the parser (RFC 8259; a lone surrogate
//! escape, a duplicate key, nesting past [`JSON_DEPTH_MAX`] or text after
//! the value refused), and lists of strings.

use super::{heap_sort, JsonError, Number, Object, Value, JSON_DEPTH_MAX};

/// Objects with more keys than this are checked for duplicate keys by
/// sorting rather than by a linear scan per key. // spec: silent; O(n log n) on hostile input
const LINEAR_DUPLICATE_SCAN_KEYS_MAX: usize = 16;

/// Parses a whole JSON text (surrounding whitespace allowed).
///
/// # Errors
/// [`JsonError`] with the byte offset of the first problem: bad syntax,
/// a lone surrogate escape, a duplicate object key, nesting deeper than
/// [`JSON_DEPTH_MAX`], or anything after the value.
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let mut p = Parser {
        text,
        bytes: text.as_bytes(),
        at: 0,
    };
    p.skip_ws();
    let v = p.value(0)?;
    p.skip_ws();
    if p.at != p.bytes.len() {
        return Err(p.error("unexpected text after the JSON value"));
    }
    Ok(v)
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
}

impl Parser<'_> {
    fn error(&self, reason: &'static str) -> JsonError {
        JsonError {
            at: self.at,
            reason,
        }
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.at += 1;
        }
    }

    fn eat(&mut self, b: u8, reason: &'static str) -> Result<(), JsonError> {
        if self.peek() == Some(b) {
            self.at += 1;
            Ok(())
        } else {
            Err(self.error(reason))
        }
    }

    fn literal(&mut self, word: &'static str, v: Value) -> Result<Value, JsonError> {
        if self.bytes[self.at..].starts_with(word.as_bytes()) {
            self.at += word.len();
            Ok(v)
        } else {
            Err(self.error("expected a JSON value"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, JsonError> {
        match self.peek() {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            None => Err(self.error("unexpected end of the text")),
            Some(_) => Err(self.error("expected a JSON value")),
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > JSON_DEPTH_MAX {
            return Err(self.error("nested too deeply"));
        }
        self.at += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.at += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth)?);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b']') => {
                    self.at += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(self.error("expected ',' or ']' in an array")),
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, JsonError> {
        if depth > JSON_DEPTH_MAX {
            return Err(self.error("nested too deeply"));
        }
        let start = self.at;
        self.at += 1;
        let mut members: Vec<(String, Value)> = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.at += 1;
            return Ok(Value::Object(Object(members)));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.error("expected a string key in an object"));
            }
            let key_at = self.at;
            let key = self.string()?;
            if members.len() < LINEAR_DUPLICATE_SCAN_KEYS_MAX
                && members.iter().any(|(k, _)| *k == key)
            {
                return Err(JsonError {
                    at: key_at,
                    reason: "duplicate key in an object",
                });
            }
            self.skip_ws();
            self.eat(b':', "expected ':' after an object key")?;
            self.skip_ws();
            let v = self.value(depth)?;
            members.push((key, v));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(b'}') => {
                    self.at += 1;
                    break;
                }
                _ => return Err(self.error("expected ',' or '}' in an object")),
            }
        }
        if members.len() > LINEAR_DUPLICATE_SCAN_KEYS_MAX {
            let mut keys: Vec<&str> = members.iter().map(|(k, _)| k.as_str()).collect();
            heap_sort(&mut keys, |a, b| a < b);
            if keys.windows(2).any(|w| w[0] == w[1]) {
                return Err(JsonError {
                    at: start,
                    reason: "duplicate key in an object",
                });
            }
        }
        Ok(Value::Object(Object(members)))
    }

    fn hex4(&mut self) -> Result<u32, JsonError> {
        let mut n = 0;
        for _ in 0..4 {
            let digit = self
                .peek()
                .and_then(|b| char::from(b).to_digit(16))
                .ok_or_else(|| self.error("expected 4 hex digits after \\u"))?;
            n = (n << 4) | digit;
            self.at += 1;
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, JsonError> {
        self.at += 1; // the opening quote
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote, backslash or control
            // character; these are ASCII, so the cut is on a char boundary.
            let run = self.bytes[self.at..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
                .ok_or(JsonError {
                    at: self.bytes.len(),
                    reason: "unterminated string",
                })?;
            out.push_str(self.text.get(self.at..self.at + run).unwrap_or_default());
            self.at += run;
            match self.bytes[self.at] {
                b'"' => {
                    self.at += 1;
                    return Ok(out);
                }
                b'\\' => {
                    self.at += 1;
                    let esc = self
                        .peek()
                        .ok_or_else(|| self.error("unterminated string"))?;
                    self.at += 1;
                    match esc {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => out.push(self.unicode_escape()?),
                        _ => {
                            self.at -= 1;
                            return Err(self.error("invalid escape in a string"));
                        }
                    }
                }
                _ => return Err(self.error("control character in a string")),
            }
        }
    }

    fn unicode_escape(&mut self) -> Result<char, JsonError> {
        let first = self.hex4()?;
        let code = match first {
            0xD800..=0xDBFF => {
                if !self.bytes[self.at..].starts_with(b"\\u") {
                    return Err(self.error("lone surrogate in a \\u escape"));
                }
                self.at += 2;
                let second = self.hex4()?;
                if !(0xDC00..=0xDFFF).contains(&second) {
                    return Err(self.error("lone surrogate in a \\u escape"));
                }
                0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            }
            0xDC00..=0xDFFF => return Err(self.error("lone surrogate in a \\u escape")),
            c => c,
        };
        char::from_u32(code).ok_or_else(|| self.error("invalid \\u escape"))
    }

    fn digits(&mut self) -> usize {
        let n = self.bytes[self.at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        self.at += n;
        n
    }

    fn number(&mut self) -> Result<Value, JsonError> {
        let start = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        match self.peek() {
            Some(b'0') => self.at += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.error("expected a digit in a number")),
        }
        if self.peek() == Some(b'.') {
            self.at += 1;
            if self.digits() == 0 {
                return Err(self.error("expected a digit after '.' in a number"));
            }
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.at += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.at += 1;
            }
            if self.digits() == 0 {
                return Err(self.error("expected a digit in a number's exponent"));
            }
        }
        Ok(Value::Number(Number(
            self.text.get(start..self.at).unwrap_or_default().to_owned(),
        )))
    }
}

/// Why a JSON text or array is not a list of strings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StringsError {
    #[error("{0}")]
    NotJson(JsonError),
    /// The text is JSON of another kind than an array.
    #[error("got {0}")]
    NotAnArray(&'static str),
    /// An element of another kind than a string.
    #[error("got {0} in it")]
    NotAString(&'static str),
}

/// A JSON text that must be an array of strings (a proof's hashes, the
/// pages of an answer), read as a list.
///
/// # Errors
/// Why it is not one: not JSON, not an array, or another type in it.
pub fn parse_strings(text: &str) -> Result<Vec<String>, StringsError> {
    match parse(text).map_err(StringsError::NotJson)? {
        Value::Array(items) => strings(&items),
        other => Err(StringsError::NotAnArray(other.kind())),
    }
}

/// The elements of an array, each of which must be a string.
///
/// # Errors
/// [`StringsError::NotAString`] for the first element that is not a string.
pub fn strings(items: &[Value]) -> Result<Vec<String>, StringsError> {
    items
        .iter()
        .map(|v| match v {
            Value::String(s) => Ok(s.clone()),
            other => Err(StringsError::NotAString(other.kind())),
        })
        .collect()
}
