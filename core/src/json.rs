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

use std::fmt;

mod fields;
mod number;
mod read;
pub use fields::{Fields, ReadError};
pub use read::{parse, parse_strings, strings, StringsError};

/// Deepest nesting of arrays and objects a document may have. Receipts
/// nest 5 deep and metadata at most 16 (`types::METADATA_DEPTH_MAX`);
/// the bound keeps hostile input from exhausting the stack. // spec: silent
pub const JSON_DEPTH_MAX: usize = 128;

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

/// Writes `"key":"value",`: one string member of a canonical object being
/// written by hand, its keys in JCS order (a delta's and a refusal's item).
pub fn write_string_member(out: &mut String, key: &str, value: &str) {
    write_string(out, key);
    out.push(':');
    write_string(out, value);
    out.push(',');
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
        out.push_str(s.get(from..i).unwrap_or_default());
        if esc.is_empty() {
            out.push_str("\\u00");
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 0xf)]));
        } else {
            out.push_str(esc);
        }
        from = i + 1;
    }
    out.push_str(s.get(from..).unwrap_or_default());
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
