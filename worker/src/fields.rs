//! Reading request bodies field by field while keeping each value's raw
//! JSON text, so amounts are parsed exactly from their number token.
//! Problems are collected so that one 400 names every bad field.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use bvs_core::FieldError;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{ApiError, ApiResult, ErrorCode, FieldProblem};

pub struct Fields {
    map: BTreeMap<String, Box<RawValue>>,
    /// Prefix for field names, e.g. `deltas[3].` for a batch item.
    prefix: String,
    pub problems: Vec<FieldProblem>,
    /// Fields holding a number out of `f64`'s range (a problem already).
    out_of_range: BTreeSet<String>,
}

impl Fields {
    /// `raw` must be a JSON object, part of a body read by
    /// [`Fields::from_bytes`] (which checked its syntax, nesting and numbers).
    pub fn from_raw(raw: &RawValue, prefix: &str) -> ApiResult<Fields> {
        let map: BTreeMap<String, Box<RawValue>> =
            serde_json::from_str(raw.get()).map_err(|_| {
                if prefix.is_empty() {
                    ApiError::coded(
                        ErrorCode::MalformedJson,
                        "Request body must be a JSON object",
                    )
                } else {
                    ApiError::field(prefix.trim_end_matches('.'), "must be a JSON object")
                }
            })?;
        Ok(Fields {
            map,
            prefix: prefix.to_string(),
            problems: Vec::new(),
            out_of_range: BTreeSet::new(),
        })
    }

    /// Reads a request's JSON object body (at most `http::BODY_BYTES_MAX`).
    ///
    /// # Errors
    /// 413 over the limit; 400 for a body that is not a JSON object.
    pub async fn read(req: &mut worker::Request) -> ApiResult<Fields> {
        let bytes = crate::http::body_bytes(req, crate::http::BODY_BYTES_MAX).await?;
        Fields::from_bytes(&bytes)
    }

    /// Reads a JSON object body in one parse: each field's raw text is kept;
    /// nesting deeper than 128 levels is malformed, and a field holding a
    /// number beyond `f64`'s range is a problem naming it.
    ///
    /// # Errors
    /// 400 for a body that is not UTF-8, empty, malformed JSON (trailing
    /// data included), too deeply nested or not a JSON object.
    pub fn from_bytes(bytes: &[u8]) -> ApiResult<Fields> {
        let text = crate::http::body_text(bytes)?;
        let map: BTreeMap<String, Box<RawValue>> = serde_json::from_str(text).map_err(|e| {
            if e.is_data() {
                ApiError::coded(
                    ErrorCode::MalformedJson,
                    "Request body must be a JSON object",
                )
            } else {
                ApiError::coded(
                    ErrorCode::MalformedJson,
                    format!("Malformed JSON body: {e}"),
                )
            }
        })?;
        let mut fields = Fields {
            map,
            prefix: String::new(),
            problems: Vec::new(),
            out_of_range: BTreeSet::new(),
        };
        let mut out_of_range = BTreeSet::new();
        for (name, raw) in &fields.map {
            let mut de = serde_json::Deserializer::from_str(raw.get());
            match (Scan {
                levels_left: NESTING_MAX - 1,
            })
            .deserialize(&mut de)
            {
                Ok(()) => {}
                Err(e) if e.to_string().starts_with(TOO_DEEP) => {
                    return Err(ApiError::coded(
                        ErrorCode::MalformedJson,
                        format!("Malformed JSON body: {e}"),
                    ));
                }
                // The syntax was checked above: a number is out of range.
                Err(_) => {
                    out_of_range.insert(name.clone());
                }
            }
        }
        for name in &out_of_range {
            fields.problem(name, "is a number out of range");
        }
        fields.out_of_range = out_of_range;
        Ok(fields)
    }

    pub fn name(&self, field: &str) -> String {
        format!("{}{field}", self.prefix)
    }

    /// Records a problem with `field` (named with the prefix).
    pub fn problem(&mut self, field: &str, reason: impl Into<String>) {
        let name = self.name(field);
        self.problems.push(FieldProblem::new(name, reason));
    }

    pub fn push(&mut self, e: FieldError) {
        self.problems
            .push(FieldProblem::new(self.name(&e.field), e.reason));
    }

    /// Whether the body has `field` at all (`null` included).
    pub fn has(&self, field: &str) -> bool {
        self.map.contains_key(field)
    }

    /// The raw JSON text of a field, treating `null` as absent.
    pub fn raw(&self, field: &str) -> Option<&str> {
        self.map
            .get(field)
            .map(|r| r.get())
            .filter(|t| *t != "null")
    }

    /// A string field. Records a problem when required and missing, or when
    /// not a string.
    pub fn string(&mut self, field: &str, required: bool) -> Option<String> {
        match self.raw(field).map(str::to_string) {
            None => {
                if required {
                    self.problem(field, "is required");
                }
                None
            }
            Some(text) => match serde_json::from_str::<String>(&text) {
                Ok(s) => Some(s),
                Err(_) => {
                    self.problem(field, "must be a string");
                    None
                }
            },
        }
    }

    /// A number field's token text. Records a problem when required and
    /// missing, or when not a JSON number.
    pub fn number(&mut self, field: &str, required: bool) -> Option<String> {
        if self.out_of_range.contains(field) {
            return None;
        }
        match self.raw(field).map(str::to_string) {
            None => {
                if required {
                    self.problem(field, "is required");
                }
                None
            }
            Some(text) => {
                let first = text.chars().next().unwrap_or(' ');
                if first == '-' || first.is_ascii_digit() {
                    Some(text)
                } else {
                    self.problem(field, "must be a JSON number");
                    None
                }
            }
        }
    }

    /// A required, non-empty string field: missing, `null`, not a string and
    /// empty are each a problem naming the field, and give "". (An empty
    /// string is as absent as a missing field: handlers treat "" as "not
    /// given", so it must never pass as valid.)
    pub fn required(&mut self, field: &str) -> String {
        let Some(text) = self.map.get(field).map(|r| r.get().to_string()) else {
            self.problem(field, "is required");
            return String::new();
        };
        match serde_json::from_str::<String>(&text) {
            Ok(s) if s.is_empty() => {
                self.problem(field, "is required and must not be empty");
                s
            }
            Ok(s) => s,
            Err(_) => {
                self.problem(field, "must be a string");
                String::new()
            }
        }
    }

    /// A required display text of 1 to `max` characters, not only spaces;
    /// trimmed.
    pub fn text(&mut self, field: &str, max: usize) -> String {
        let s = self.required(field);
        let name = self.name(field);
        if self.problems.iter().any(|p| p.field == name) {
            return s;
        }
        let n = s.chars().take(max + 1).count();
        if s.trim().is_empty() || n > max || s.chars().any(char::is_control) {
            self.problem(
                field,
                format!("must be 1 to {max} characters, not only spaces"),
            );
        }
        s.trim().to_string()
    }

    /// A field as a JSON value, `null` included (`None` when missing).
    pub fn json(&mut self, field: &str) -> Option<serde_json::Value> {
        let text = self.map.get(field)?.get().to_string();
        match serde_json::from_str(&text) {
            Ok(v) => Some(v),
            Err(_) => {
                self.problem(field, "is not valid JSON");
                None
            }
        }
    }

    /// Keeps `r`'s value, or records its error (named with the prefix).
    pub fn check<T>(&mut self, r: Result<T, FieldError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.push(e);
                None
            }
        }
    }

    /// Any JSON value (`null` counts as absent).
    pub fn value(&mut self, field: &str) -> Option<serde_json::Value> {
        let text = self.raw(field)?.to_string();
        match serde_json::from_str(&text) {
            Ok(v) => Some(v),
            Err(_) => {
                self.problem(field, "is not valid JSON");
                None
            }
        }
    }

    /// An optional `metadata`-style field: a JSON object within
    /// `types::Metadata`'s bounds; records its error under `field`.
    pub fn metadata(&mut self, field: &str) -> Option<bvs_core::types::Metadata> {
        let v = self.value(field)?;
        match bvs_core::types::Metadata::parse(&v) {
            Ok(m) => Some(m),
            Err(mut e) => {
                e.field = field.to_string();
                self.push(e);
                None
            }
        }
    }

    /// The raw elements of an array field.
    pub fn array(&mut self, field: &str, required: bool) -> Option<Vec<Box<RawValue>>> {
        match self.raw(field).map(str::to_string) {
            None => {
                if required {
                    self.problem(field, "is required");
                }
                None
            }
            Some(text) => match serde_json::from_str::<Vec<Box<RawValue>>>(&text) {
                Ok(v) => Some(v),
                Err(_) => {
                    self.problem(field, "must be an array");
                    None
                }
            },
        }
    }

    /// Records a problem for each member not in `known` (for objects
    /// whose every member matters, such as a delta's `conditions`: a
    /// misspelt condition must not pass as none).
    pub fn only(&mut self, known: &[&str]) {
        let unknown: Vec<String> = self
            .map
            .keys()
            .filter(|k| !known.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in unknown {
            self.problem(&k, format!("is not one of {}", known.join(", ")));
        }
    }

    /// Moves `other`'s problems (already named with its prefix) here.
    pub fn absorb(&mut self, other: Fields) {
        self.problems.extend(other.problems);
    }

    /// Parses `field` with `parse` when present; records its error.
    pub fn parse<T>(
        &mut self,
        field: &str,
        value: Option<String>,
        parse: impl FnOnce(&str) -> Result<T, FieldError>,
    ) -> Option<T> {
        let v = value?;
        match parse(&v) {
            Ok(t) => Some(t),
            Err(mut e) => {
                e.field = field.to_string();
                self.push(e);
                None
            }
        }
    }

    /// 400 naming every problem, if any.
    ///
    /// # Errors
    /// `ApiError::Validation` when a problem was recorded.
    pub fn finish(self) -> ApiResult<()> {
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(ApiError::Validation(self.problems))
        }
    }
}

/// Containers a body may nest (the object itself included), as
/// `serde_json`'s own limit.
const NESTING_MAX: u32 = 127;
const TOO_DEEP: &str = "nesting deeper than";

/// Walks one JSON value without keeping it: fails on nesting beyond
/// `levels_left` containers, and (in `serde_json`) on a number out of range.
#[derive(Clone, Copy)]
struct Scan {
    levels_left: u32,
}

impl Scan {
    fn inner<E: serde::de::Error>(self) -> Result<Scan, E> {
        match self.levels_left.checked_sub(1) {
            Some(levels_left) => Ok(Scan { levels_left }),
            None => Err(E::custom(format!("{TOO_DEEP} {} levels", NESTING_MAX + 1))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Scan {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Scan {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while seq.next_element_seed(inner)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let inner = self.inner()?;
        while map.next_key::<serde::de::IgnoredAny>()?.is_some() {
            map.next_value_seed(inner)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn fields(body: &str) -> Fields {
        Fields::from_bytes(body.as_bytes()).unwrap()
    }

    #[test]
    fn missing_null_empty_and_non_string_required_fields_are_each_named() {
        let mut f = fields(r#"{"b": null, "c": "", "d": 5, "e": "x"}"#);
        for name in ["a", "b", "c", "d"] {
            assert_eq!(f.required(name), "");
        }
        assert_eq!(f.required("e"), "x");
        let named: Vec<(&str, &str)> = f
            .problems
            .iter()
            .map(|p| (p.field.as_str(), p.reason.as_str()))
            .collect();
        assert_eq!(
            named,
            [
                ("a", "is required"),
                ("b", "must be a string"),
                ("c", "is required and must not be empty"),
                ("d", "must be a string"),
            ]
        );
    }

    #[test]
    fn an_amount_keeps_its_number_token_exactly() {
        let mut f = fields(r#"{"delta": 0.100000000000000000000001}"#);
        assert_eq!(
            f.number("delta", true).as_deref(),
            Some("0.100000000000000000000001")
        );
    }

    #[test]
    fn null_is_a_value_for_json_and_absent_for_optional_strings() {
        let mut f = fields(r#"{"days": null}"#);
        assert_eq!(f.json("days"), Some(serde_json::Value::Null));
        assert_eq!(f.string("days", false), None);
        assert!(f.json("missing").is_none());
        assert!(f.problems.is_empty());
    }

    #[test]
    fn malformed_trailing_deep_and_non_object_bodies_are_bad_requests() {
        for body in [
            "{\"a\":",
            "{\"a\": 1} x",
            "{\"a\": tru}",
            "[1, 2]",
            "\"text\"",
        ] {
            let e = Fields::from_bytes(body.as_bytes()).err().unwrap();
            assert_eq!(e.status(), 400, "{body}");
        }
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        let e = Fields::from_bytes(deep.as_bytes()).err().unwrap();
        assert!(e.body().message.starts_with("Malformed JSON body"));
        let e = Fields::from_bytes(b"{\"a\":").err().unwrap();
        assert!(e.body().message.starts_with("Malformed JSON body"));
    }

    #[test]
    fn nesting_up_to_serde_jsons_limit_passes_and_one_more_level_does_not() {
        let nested = |levels: usize| {
            let body = format!("{{\"a\": {}{}}}", "[".repeat(levels), "]".repeat(levels));
            Fields::from_bytes(body.as_bytes()).is_ok()
        };
        assert!(nested(126));
        assert!(!nested(127));
        let as_value = |levels: usize| {
            let body = format!("{{\"a\": {}{}}}", "[".repeat(levels), "]".repeat(levels));
            serde_json::from_str::<serde_json::Value>(&body).is_ok()
        };
        assert!(as_value(126));
        assert!(!as_value(127));
    }

    #[test]
    fn a_number_out_of_range_is_a_problem_naming_its_field_once() {
        let mut f = fields(r#"{"delta": 1e400, "note": {"x": [-1e999]}, "ok": 1e300}"#);
        assert_eq!(f.number("delta", true), None);
        let named: Vec<&str> = f.problems.iter().map(|p| p.field.as_str()).collect();
        assert_eq!(named, ["delta", "note"]);
    }
}
