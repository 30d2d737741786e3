//! Reading fields of a JSON body, collecting every problem so one 400 names
//! all the fields that are wrong.

use serde_json::{Map, Value};

use crate::error::{ApiError, ApiResult, FieldProblem};

pub struct Fields<'a> {
    body: &'a Map<String, Value>,
    pub problems: Vec<FieldProblem>,
}

impl<'a> Fields<'a> {
    pub fn new(body: &'a Map<String, Value>) -> Self {
        Self {
            body,
            problems: Vec::new(),
        }
    }

    /// A required, non-empty string field; records a problem and returns ""
    /// otherwise. (An empty string is as absent as a missing field: every
    /// handler treats "" as "not given", so it must never pass as valid.)
    pub fn string(&mut self, name: &str) -> &'a str {
        match self.body.get(name) {
            Some(Value::String(s)) if s.is_empty() => {
                self.problem(name, "is required and must not be empty");
                ""
            }
            Some(Value::String(s)) => s.as_str(),
            Some(_) => {
                self.problem(name, "must be a string");
                ""
            }
            None => {
                self.problem(name, "is required");
                ""
            }
        }
    }

    /// An optional string field (absent or null → None).
    pub fn optional_string(&mut self, name: &str) -> Option<&'a str> {
        match self.body.get(name) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.as_str()),
            Some(_) => {
                self.problem(name, "must be a string");
                None
            }
        }
    }

    /// A required display text of 1 to `max` characters, not only spaces.
    pub fn text(&mut self, name: &str, max: usize) -> &'a str {
        let s = self.string(name);
        if self.has(name) {
            return s;
        }
        let n = s.chars().take(max + 1).count();
        if s.trim().is_empty() || n > max || s.chars().any(char::is_control) {
            self.problem(
                name,
                &format!("must be 1 to {max} characters, not only spaces"),
            );
        }
        s.trim()
    }

    pub fn raw(&self, name: &str) -> Option<&'a Value> {
        self.body.get(name)
    }

    pub fn problem(&mut self, name: &str, reason: &str) {
        self.problems.push(FieldProblem::new(name, reason));
    }

    pub fn check<T>(&mut self, r: Result<T, bvs_core::FieldError>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.problems.push(FieldProblem::new(e.field, e.reason));
                None
            }
        }
    }

    fn has(&self, name: &str) -> bool {
        self.problems.iter().any(|p| p.field == name)
    }

    /// 400 naming every field with a problem, if any.
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

    #[test]
    fn an_empty_required_string_is_a_problem_naming_the_field() {
        let body = serde_json::json!({"email": "", "password": "x"});
        let mut f = Fields::new(body.as_object().unwrap());
        assert_eq!(f.string("email"), "");
        assert_eq!(f.string("password"), "x");
        assert_eq!(f.problems.len(), 1);
        assert_eq!(f.problems[0].field, "email");
    }
}
