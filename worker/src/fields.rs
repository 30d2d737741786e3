//! Reading request bodies field by field while keeping each value's raw
//! JSON text, so amounts are parsed exactly from their number token.
//! Problems are collected so that one 400 names every bad field.

use std::collections::BTreeMap;

use bvs_core::FieldError;
use serde_json::value::RawValue;

use crate::error::{ApiError, ApiResult, ErrorCode, FieldProblem};

pub struct Fields {
    map: BTreeMap<String, Box<RawValue>>,
    /// Prefix for field names, e.g. `deltas[3].` for a batch item.
    prefix: String,
    pub problems: Vec<FieldProblem>,
}

impl Fields {
    /// `raw` must be a JSON object; the body was already validated by
    /// `http::parse_json` (UTF-8, syntax, nesting).
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

    pub fn from_bytes(bytes: &[u8]) -> ApiResult<Fields> {
        crate::http::parse_json(bytes)?;
        let text = std::str::from_utf8(bytes).map_err(|_| {
            ApiError::coded(ErrorCode::MalformedJson, "Request body is not valid UTF-8")
        })?;
        let raw: Box<RawValue> = serde_json::from_str(text).map_err(|e| {
            ApiError::coded(
                ErrorCode::MalformedJson,
                format!("Malformed JSON body: {e}"),
            )
        })?;
        Fields::from_raw(&raw, "")
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
}
