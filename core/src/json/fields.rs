//! Reading a document: a JSON object's fields into typed values (hashes,
//! amounts, times, periods), each error naming the field's path.

use super::{Object, Value};
use crate::error::FieldError;

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
    pub fn hash(&self, key: &str) -> Result<crate::hash::Hash32, ReadError> {
        crate::hash::Hash32::parse_field(&self.path_of(key), self.string(key)?).map_err(Box::new)
    }

    /// An amount as a JSON number token or a decimal string, read exactly.
    ///
    /// # Errors
    /// Absent, null, or not an amount.
    pub fn amount(&self, key: &str) -> Result<crate::amount::Amount, ReadError> {
        let text = match self.required(key)? {
            Value::Number(n) => n.as_str(),
            Value::String(s) => s,
            v => return Err(self.wrong(key, "an amount", v)),
        };
        crate::amount::Amount::parse(text).map_err(|e| self.fail(key, e.to_string()))
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
    pub fn hashes(&self, key: &str, required: bool) -> Result<Vec<crate::hash::Hash32>, ReadError> {
        self.array(key, required)?
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let field = format!("{}[{i}]", self.path_of(key));
                match v {
                    Value::String(s) => {
                        crate::hash::Hash32::parse_field(&field, s).map_err(Box::new)
                    }
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
