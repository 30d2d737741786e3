//! A small strict JSON reader and writer (RFC 8259) and the RFC 8785 (JCS)
//! canonical form, for the verification path.
//!
//! Why not serde_json here: the browser verifier (verifier-wasm) must stay
//! small (bench/README.md), and serde_json's generic deserializers, float
//! parser and error machinery were most of its size. The verifier reads
//! documents through this module, so the server's tests, the CLI and the
//! browser all read a receipt with the same code. The worker keeps
//! serde_json for its own request bodies.
//!
//! Numbers are kept as the text they were written with: amounts are read
//! exactly from it (`Amount::parse`), indices as whole numbers, and only
//! the JCS form of metadata numbers is rounded to the double it denotes, as
//! RFC 8785 says: exactly, without floating point (`json/number.rs`).

use crate::error::FieldError;
use std::fmt;

mod number;

/// Deepest nesting of arrays and objects a document may have. Receipts
/// nest 5 deep and metadata at most 16 (`types::METADATA_DEPTH_MAX`);
/// the bound keeps hostile input from exhausting the stack. // spec: silent
pub const JSON_DEPTH_MAX: usize = 128;

/// Objects with more keys than this are checked for duplicate keys by
/// sorting rather than by a linear scan per key. // spec: silent; O(n log n) on hostile input
const LINEAR_DUPLICATE_SCAN_KEYS_MAX: usize = 16;

/// A parsed JSON value. Objects keep their keys in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Object),
}

/// A number token exactly as written (validated RFC 8259 syntax).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Number(String);

/// An object's members in document order; keys are unique.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Object(Vec<(String, Value)>);

/// Where and why a text is not JSON (or a value has no JCS form).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonError {
    /// Byte offset into the text (0 for canonicalization errors).
    pub at: usize,
    pub reason: &'static str,
}

impl fmt::Display for JsonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at byte {}", self.reason, self.at)
    }
}

impl std::error::Error for JsonError {}

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
            out.push_str(&self.text[self.at..self.at + run]);
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
        Ok(Value::Number(Number(self.text[start..self.at].to_owned())))
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

// ------------------------------------------------------------------ values

impl Value {
    /// The compact JSON text, members in document order, numbers as written.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Value::Null => out.push_str("null"),
            Value::Bool(true) => out.push_str("true"),
            Value::Bool(false) => out.push_str("false"),
            Value::Number(n) => out.push_str(&n.0),
            Value::String(s) => write_string(out, s),
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write(out);
                }
                out.push(']');
            }
            Value::Object(o) => {
                out.push('{');
                for (i, (k, v)) in o.0.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, k);
                    out.push(':');
                    v.write(out);
                }
                out.push('}');
            }
        }
    }

    /// The RFC 8785 (JCS) canonical text: no whitespace, object keys
    /// sorted by their UTF-16 code units, numbers in ECMAScript form,
    /// strings with the minimal escapes.
    ///
    /// # Errors
    /// A number that is not a finite IEEE 754 double (e.g. `1e400`).
    pub fn canonical(&self) -> Result<String, JsonError> {
        let mut out = String::new();
        self.write_canonical(&mut out)?;
        Ok(out)
    }

    pub(crate) fn write_canonical(&self, out: &mut String) -> Result<(), JsonError> {
        match self {
            Value::Number(n) => out.push_str(&n.canonical()?),
            Value::Array(items) => {
                out.push('[');
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    v.write_canonical(out)?;
                }
                out.push(']');
            }
            Value::Object(o) => {
                let mut members: Vec<&(String, Value)> = o.0.iter().collect();
                heap_sort(&mut members, |a, b| {
                    a.0.encode_utf16().lt(b.0.encode_utf16())
                });
                out.push('{');
                for (i, (k, v)) in members.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write_string(out, k);
                    out.push(':');
                    v.write_canonical(out)?;
                }
                out.push('}');
            }
            // Written here rather than by `write`, so the verifier does not
            // carry the compact writer too.
            Value::Null => out.push_str("null"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::String(text) => write_string(out, text),
        }
        Ok(())
    }

    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Value::Object(o) => Some(o),
            _ => None,
        }
    }

    /// The value's JSON type, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }
}

impl Object {
    /// The member named `key`, if present.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &Value)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Number {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The number as a whole `u64`, if it is written as one (digits only:
    /// no sign, fraction or exponent).
    pub fn as_u64(&self) -> Option<u64> {
        if self.0.bytes().all(|b| b.is_ascii_digit()) {
            self.0.parse().ok()
        } else {
            None
        }
    }

    /// The ECMAScript `Number.prototype.toString` form of the double this
    /// token denotes, as RFC 8785 section 3.2.2.3 requires (computed
    /// without floating point: see `number`).
    ///
    /// # Errors
    /// A token beyond the range of a finite double.
    pub fn canonical(&self) -> Result<String, JsonError> {
        number::canonical(&self.0).ok_or(JsonError {
            at: 0,
            reason: "number is too large for a double",
        })
    }
}

/// Sorts in place in O(n log n) with no allocation. The standard library's
/// sorts are faster on large inputs but each instantiation costs ~10 KB of
/// WebAssembly; here inputs are object keys (unique once parsed, so
/// stability does not matter) and size is what counts.
fn heap_sort<T>(v: &mut [T], less: impl Fn(&T, &T) -> bool) {
    let sift_down = |v: &mut [T], mut root: usize, end: usize| loop {
        let mut child = 2 * root + 1;
        if child >= end {
            return;
        }
        if child + 1 < end && less(&v[child], &v[child + 1]) {
            child += 1;
        }
        if !less(&v[root], &v[child]) {
            return;
        }
        v.swap(root, child);
        root = child;
    };
    let n = v.len();
    for start in (0..n / 2).rev() {
        sift_down(v, start, n);
    }
    for end in (1..n).rev() {
        v.swap(0, end);
        sift_down(v, 0, end);
    }
}

/// `s` as a JSON string literal, for quoting text in messages (instead of
/// `{:?}`, whose Unicode tables cost the browser verifier ~3 KB).
pub fn quoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    write_string(&mut out, s);
    out
}

/// Writes `s` as a JSON string with the escapes of RFC 8785 (and of
/// `JSON.stringify`): `\"`, `\\`, `\b \f \n \r \t`, `\u00xx` (lowercase
/// hex) for other control characters, everything else as itself.
pub fn write_string(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push('"');
    let mut from = 0;
    for (i, b) in s.bytes().enumerate() {
        let esc = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[from..i]);
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(esc);
        }
        from = i + 1;
    }
    out.push_str(&s[from..]);
    out.push('"');
}

// ------------------------------------------------------------------ serde bridge (worker side)

impl Value {
    /// The same value from a `serde_json::Value` (the worker's request
    /// bodies). Numbers keep serde_json's text, which denotes the same
    /// double, so the canonical form is unchanged.
    pub fn from_serde(v: &serde_json::Value) -> Value {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => Value::Number(Number(n.to_string())),
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(items) => {
                Value::Array(items.iter().map(Value::from_serde).collect())
            }
            serde_json::Value::Object(m) => Value::Object(Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), Value::from_serde(v)))
                    .collect(),
            )),
        }
    }
}

/// Written as its compact JSON text. Like `Amount`, only serde_json
/// understands the raw tokens: serialize with `serde_json::to_string`.
impl serde::Serialize for Value {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_json::value::RawValue::from_string(self.to_json())
            .map_err(serde::ser::Error::custom)?
            .serialize(s)
    }
}

/// Read with this module's parser from the raw text (serde_json only).
impl<'de> serde::Deserialize<'de> for Value {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(d)?;
        parse(raw.get()).map_err(serde::de::Error::custom)
    }
}

// ------------------------------------------------------------------ reading documents

/// A field error while reading a document, boxed: a pointer-sized error
/// keeps each `?` in the readers small (they are most of the verifier's
/// own code in WebAssembly).
pub type ReadError = Box<FieldError>;

/// A JSON object being read into a typed document, with the path of the
/// object for error messages (`deltas[3]`, `proof.items[0].raw`).
pub struct Fields<'a> {
    object: &'a Object,
    path: String,
}

impl<'a> Fields<'a> {
    /// `value` as an object at `path` ("" for the document itself).
    ///
    /// # Errors
    /// `<path>: must be an object, got <kind>`.
    pub fn of(value: &'a Value, path: String) -> Result<Self, ReadError> {
        match value {
            Value::Object(object) => Ok(Self { object, path }),
            other => Err(Box::new(FieldError::new(
                if path.is_empty() { "document" } else { &path },
                format!("must be an object, got {}", other.kind()),
            ))),
        }
    }

    /// The path of a member, for errors and for nested objects.
    pub fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_owned()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    fn fail(&self, key: &str, reason: impl Into<String>) -> ReadError {
        Box::new(FieldError::new(self.path_of(key), reason))
    }

    /// A member that must be present and not null.
    ///
    /// # Errors
    /// `<path>: is required`.
    pub fn required(&self, key: &str) -> Result<&'a Value, ReadError> {
        match self.object.get(key) {
            None | Some(Value::Null) => Err(self.fail(key, "is required")),
            Some(v) => Ok(v),
        }
    }

    /// A member that may be absent or null.
    pub fn optional(&self, key: &str) -> Option<&'a Value> {
        match self.object.get(key) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    fn wrong(&self, key: &str, want: &str, got: &Value) -> ReadError {
        self.fail(key, format!("must be {want}, got {}", got.kind()))
    }

    /// # Errors
    /// Absent, null or not a string.
    pub fn string(&self, key: &str) -> Result<&'a str, ReadError> {
        match self.required(key)? {
            Value::String(s) => Ok(s),
            v => Err(self.wrong(key, "a string", v)),
        }
    }

    /// # Errors
    /// Present but not a string.
    pub fn optional_string(&self, key: &str) -> Result<Option<&'a str>, ReadError> {
        match self.optional(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(v) => Err(self.wrong(key, "a string", v)),
        }
    }

    /// # Errors
    /// Absent, null or not a boolean.
    pub fn bool(&self, key: &str) -> Result<bool, ReadError> {
        match self.required(key)? {
            Value::Bool(b) => Ok(*b),
            v => Err(self.wrong(key, "a boolean", v)),
        }
    }

    /// # Errors
    /// Absent, null or not a whole number from 0 to 2^64-1.
    pub fn u64(&self, key: &str) -> Result<u64, ReadError> {
        match self.required(key)? {
            Value::Number(n) => n
                .as_u64()
                .ok_or_else(|| self.fail(key, "must be a whole number from 0 to 2^64-1")),
            v => Err(self.wrong(key, "a number", v)),
        }
    }

    /// A hash as 64 hex digits.
    ///
    /// # Errors
    /// Absent, null, not a string or not a hash.
    pub fn hash(&self, key: &str) -> Result<crate::Hash32, ReadError> {
        crate::Hash32::parse_field(&self.path_of(key), self.string(key)?).map_err(Box::new)
    }

    /// An amount as a JSON number token or a decimal string, read exactly.
    ///
    /// # Errors
    /// Absent, null, or not an amount.
    pub fn amount(&self, key: &str) -> Result<crate::Amount, ReadError> {
        let text = match self.required(key)? {
            Value::Number(n) => n.as_str(),
            Value::String(s) => s,
            v => return Err(self.wrong(key, "an amount", v)),
        };
        crate::Amount::parse(text).map_err(|e| self.fail(key, e.to_string()))
    }

    /// An array member; absent or null reads as empty when `required` is false.
    ///
    /// # Errors
    /// Absent (when required), or not an array.
    pub fn array(&self, key: &str, required: bool) -> Result<&'a [Value], ReadError> {
        match self.object.get(key) {
            Some(Value::Array(items)) => Ok(items),
            None | Some(Value::Null) if !required => Ok(&[]),
            None | Some(Value::Null) => Err(self.fail(key, "is required")),
            Some(v) => Err(self.wrong(key, "an array", v)),
        }
    }

    /// An array of hashes.
    ///
    /// # Errors
    /// As [`Fields::array`], or an element that is not a hash.
    pub fn hashes(&self, key: &str, required: bool) -> Result<Vec<crate::Hash32>, ReadError> {
        self.array(key, required)?
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let field = format!("{}[{i}]", self.path_of(key));
                match v {
                    Value::String(s) => crate::Hash32::parse_field(&field, s).map_err(Box::new),
                    other => Err(Box::new(FieldError::new(
                        field,
                        format!("must be a string, got {}", other.kind()),
                    ))),
                }
            })
            .collect()
    }

    /// An RFC 3339 timestamp as unix milliseconds (`time::parse_iso_ms`).
    ///
    /// # Errors
    /// Absent, null, or not a timestamp.
    pub fn timestamp(&self, key: &str) -> Result<i64, ReadError> {
        crate::time::parse_iso_ms(self.string(key)?).map_err(|e| self.fail(key, e.to_string()))
    }

    /// A calendar month `YYYY-MM`.
    ///
    /// # Errors
    /// Absent, null, or not a month.
    pub fn period(&self, key: &str) -> Result<crate::types::Period, ReadError> {
        crate::types::Period::parse(self.string(key)?).map_err(|e| self.fail(key, e.reason))
    }

    /// Each element of an array member read by `read` as an object at
    /// `<path>[i]`; absent or null is empty unless `required`.
    ///
    /// # Errors
    /// As [`Fields::array`], or the first element `read` refuses.
    pub fn each<T>(
        &self,
        key: &str,
        required: bool,
        read: impl Fn(&Fields<'a>) -> Result<T, ReadError>,
    ) -> Result<Vec<T>, ReadError> {
        let items = self.array(key, required)?;
        let path = self.path_of(key);
        items
            .iter()
            .enumerate()
            .map(|(i, v)| read(&Fields::of(v, format!("{path}[{i}]"))?))
            .collect()
    }

    /// A nested object member.
    ///
    /// # Errors
    /// Absent, null or not an object.
    pub fn object(&self, key: &str) -> Result<Fields<'a>, ReadError> {
        Fields::of(self.required(key)?, self.path_of(key))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_what_rfc_8259_allows() {
        let v = parse(
            r#" {"a": [1, -0.5e+3, true, false, null], "b": "x\u00e9\ud83d\ude00\n\"\\\/"} "#,
        )
        .unwrap();
        let o = v.as_object().unwrap();
        assert_eq!(o.get("b"), Some(&Value::String("xé😀\n\"\\/".into())));
        assert_eq!(
            v.to_json(),
            r#"{"a":[1,-0.5e+3,true,false,null],"b":"xé😀\n\"\\/"}"#
        );
        assert_eq!(parse("0").unwrap(), Value::Number(Number("0".into())));
        assert_eq!(parse("[]").unwrap(), Value::Array(vec![]));
        assert_eq!(parse("{}").unwrap(), Value::Object(Object::default()));
    }

    #[test]
    fn refuses_what_rfc_8259_does_not_allow() {
        for bad in [
            "",
            " ",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "01",
            "1.",
            ".5",
            "-",
            "1e",
            "+1",
            "NaN",
            "Infinity",
            "'a'",
            "\"\\x\"",
            "\"a",
            "\"\u{1}\"",
            "[1 2]",
            "{\"a\" 1}",
            "{1:2}",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "\"\\u12\"",
            "tru",
            "nul",
            "1 2",
            "{\"a\":1,\"a\":2}",
        ] {
            assert!(parse(bad).is_err(), "{bad:?} parsed");
        }
        let deep = format!(
            "{}{}",
            "[".repeat(JSON_DEPTH_MAX + 1),
            "]".repeat(JSON_DEPTH_MAX + 1)
        );
        assert_eq!(parse(&deep).unwrap_err().reason, "nested too deeply");
        let ok = format!(
            "{}{}",
            "[".repeat(JSON_DEPTH_MAX),
            "]".repeat(JSON_DEPTH_MAX)
        );
        assert!(parse(&ok).is_ok());
        let many: String = (0..40).map(|i| format!("\"k{i}\":{i},")).collect();
        assert!(parse(&format!("{{{many}\"k7\":0}}")).is_err());
        assert!(parse(&format!("{{{many}\"k40\":0}}")).is_ok());
        assert_eq!(
            parse("[1,x]").unwrap_err().to_string(),
            "expected a JSON value at byte 3"
        );
    }

    #[test]
    fn canonical_form_matches_rfc_8785_examples() {
        // RFC 8785 section 3.2.3 (sorting) and appendix B (numbers).
        let v = parse(r#"{"€":1,"\r":2,"ö":3,"1":4,"😀":5,"\ufb33":6}"#).unwrap();
        assert_eq!(
            v.canonical().unwrap(),
            "{\"\\r\":2,\"1\":4,\"ö\":3,\"€\":1,\"😀\":5,\"\u{fb33}\":6}"
        );
        for (text, want) in [
            ("0", "0"),
            ("-0", "0"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("0.000001", "0.000001"),
            ("0.0000001", "1e-7"),
            ("5e-324", "5e-324"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("-1.5E2", "-150"),
            ("9007199254740992", "9007199254740992"),
            ("9007199254740993", "9007199254740992"),
            ("0.1", "0.1"),
            ("295147905179352830000", "295147905179352830000"),
            ("4.50", "4.5"),
            ("123e-20", "1.23e-18"),
        ] {
            assert_eq!(parse(text).unwrap().canonical().unwrap(), want, "{text}");
        }
        assert!(parse("1e400").unwrap().canonical().is_err());
        assert_eq!(
            parse(r#""\u0001\u001f\b\f\t\n\r\"\\\u007f\u2028""#)
                .unwrap()
                .canonical()
                .unwrap(),
            "\"\\u0001\\u001f\\b\\f\\t\\n\\r\\\"\\\\\u{7f}\u{2028}\""
        );
    }

    proptest! {
        #[test]
        fn heap_sort_sorts(mut v in prop::collection::vec(any::<u16>(), 0..200)) {
            let mut want = v.clone();
            want.sort_unstable();
            heap_sort(&mut v, |a, b| a < b);
            prop_assert_eq!(v, want);
        }
    }

    fn arb_json() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::Bool),
            any::<i64>().prop_map(|n| serde_json::json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| serde_json::json!(f)),
            "\\PC{0,8}".prop_map(serde_json::Value::String),
            "[\\u{0}-\\u{7f}]{0,8}".prop_map(serde_json::Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
                prop::collection::btree_map("\\PC{0,6}", inner, 0..6)
                    .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn reads_what_serde_json_writes_and_canonicalizes_like_serde_json_canonicalizer(v in arb_json()) {
            let text = serde_json::to_string(&v).unwrap();
            let ours = parse(&text).unwrap();
            prop_assert_eq!(&ours.to_json(), &text);
            prop_assert_eq!(
                ours.canonical().unwrap(),
                serde_json_canonicalizer::to_string(&v).unwrap()
            );
            let pretty = serde_json::to_string_pretty(&v).unwrap();
            prop_assert_eq!(parse(&pretty).unwrap(), ours);
        }

        #[test]
        fn numbers_are_canonical_like_ecmascript(bits in any::<u64>()) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            let ours = Number(format!("{x:e}")).canonical().unwrap();
            let theirs = serde_json_canonicalizer::to_string(&serde_json::json!(x)).unwrap();
            prop_assert_eq!(&ours, &theirs);
            // And the text reads back as the same double.
            prop_assert_eq!(ours.parse::<f64>().unwrap(), if x == 0.0 { 0.0 } else { x });
        }

        #[test]
        fn any_text_is_parsed_or_refused_like_serde_json(text in "[\\[\\]{}\":,0-9eE.+\\-a-z\\\\ ]{0,24}") {
            let ours = parse(&text);
            let theirs = serde_json::from_str::<serde_json::Value>(&text);
            // Where we differ on purpose: serde_json keeps the last of
            // duplicate keys (we refuse them: one document, one reading) and
            // refuses numbers beyond a double (we keep the text; only a
            // canonical form needs the double).
            let on_purpose = matches!(&ours, Err(e) if e.reason == "duplicate key in an object")
                || matches!(&theirs, Err(e) if e.to_string().starts_with("number out of range"));
            prop_assert!(on_purpose || ours.is_ok() == theirs.is_ok(), "{:?}: {:?} vs {:?}", text, ours, theirs);
        }
    }
}
