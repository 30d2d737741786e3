//! Sets of rows passed to one statement as one JSON parameter, read with
//! `json_each(?1)` (issue 27): a statement per table and round whatever
//! the number of rows, within D1's 100 bound parameters.

use super::{Arg, Query, Statements};
use crate::error::ApiResult;

/// D1: the largest string or BLOB value, 1,000,000 bytes; a JSON set
/// passed as one parameter stays under it with a margin.
/// <https://developers.cloudflare.com/d1/platform/limits/>
pub const JSON_PARAM_BYTES_MAX: usize = 900_000;

/// A set of rows for a statement that reads them with `json_each(?1)`
/// (issue 27: one statement per table and round, whatever the number of
/// rows; D1 binds at most 100 parameters, and a JSON text is one): the
/// rows as JSON array texts of at most [`JSON_PARAM_BYTES_MAX`] bytes each
/// (one text for any ordinary set; a row larger than that is alone).
///
/// # Errors
/// A row that does not serialize.
pub fn json_sets<T: serde::Serialize>(rows: &[T]) -> ApiResult<Vec<String>> {
    let mut out = Vec::new();
    let mut current = String::from("[");
    for row in rows {
        let text = serde_json::to_string(row)?;
        if current.len() > 1 && current.len() + text.len() + 2 > JSON_PARAM_BYTES_MAX {
            current.push(']');
            out.push(std::mem::replace(&mut current, String::from("[")));
        }
        if current.len() > 1 {
            current.push(',');
        }
        current.push_str(&text);
    }
    if current.len() > 1 {
        current.push(']');
        out.push(current);
    }
    Ok(out)
}

/// One statement per JSON set of `rows` ([`json_sets`]): `sql` reads its
/// set from `?1`, then binds `fixed` as `?2, ?3, ...`.
///
/// # Errors
/// A row that does not serialize, or a value that cannot be bound.
pub fn over_json<'a, T: serde::Serialize>(
    sql: &'static str,
    rows: &[T],
    fixed: &[Arg<'a>],
) -> Statements<'a> {
    Ok(json_sets(rows)?
        .into_iter()
        .map(|set| {
            Query::new(
                sql,
                std::iter::once(Arg::Owned(set)).chain(fixed.iter().cloned()),
            )
        })
        .collect())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::{json_sets, JSON_PARAM_BYTES_MAX};

    #[test]
    fn json_sets_split_only_past_the_value_limit() {
        let none: [u8; 0] = [];
        assert!(json_sets(&none).unwrap().is_empty());
        assert_eq!(
            json_sets(&[(1, "a"), (2, "b")]).unwrap(),
            vec![r#"[[1,"a"],[2,"b"]]"#]
        );
        let big = "x".repeat(JSON_PARAM_BYTES_MAX / 3);
        let sets = json_sets(&[&big, &big, &big, &big]).unwrap();
        assert_eq!(sets.len(), 2);
        assert!(sets.iter().all(|s| s.len() <= JSON_PARAM_BYTES_MAX));
        let rows: Vec<String> = sets
            .iter()
            .flat_map(|s| serde_json::from_str::<Vec<String>>(s).unwrap())
            .collect();
        assert_eq!(rows.len(), 4);
    }
}
