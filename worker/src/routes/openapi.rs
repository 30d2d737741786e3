//! `GET /openapi.json`: the OpenAPI 3.1 description of every public route,
//! kept next to the code and checked against `router::ROUTES` by the test
//! below, so a route cannot be added or removed without the document.

use worker::{Headers, Response};

use crate::error::ApiResult;

/// The document, as written in `worker/src/openapi.json`.
pub const DOCUMENT: &str = include_str!("../openapi.json");

/// `GET /openapi.json` (public).
pub fn get() -> ApiResult<Response> {
    let headers = Headers::new();
    headers.set("content-type", "application/json; charset=utf-8")?;
    headers.set("cache-control", "public, max-age=300")?;
    headers.set("access-control-allow-origin", "*")?;
    Ok(Response::ok(DOCUMENT)?.with_headers(headers))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::DOCUMENT;
    use crate::router::ROUTES;
    use std::collections::BTreeSet;

    /// DEV_MODE-only diagnostics (404 unless DEV_MODE is on) are left out of
    /// the document on purpose; the document's description says so.
    fn excluded(pattern: &str) -> bool {
        pattern.starts_with("/dev/")
    }

    /// `/a/:b/c` → `/a/{b}/c`.
    fn openapi_path(pattern: &str) -> String {
        pattern
            .split('/')
            .map(
                |s| match s.strip_prefix(':').or_else(|| s.strip_prefix('*')) {
                    Some(name) => format!("{{{name}}}"),
                    None => s.to_string(),
                },
            )
            .collect::<Vec<_>>()
            .join("/")
    }

    fn routed() -> BTreeSet<(String, String)> {
        ROUTES
            .iter()
            .filter(|r| !excluded(r.pattern))
            .map(|r| {
                (
                    r.method.to_string().to_ascii_lowercase(),
                    openapi_path(r.pattern),
                )
            })
            .collect()
    }

    fn documented() -> BTreeSet<(String, String)> {
        let doc: serde_json::Value = serde_json::from_str(DOCUMENT).expect("openapi.json is JSON");
        let paths = doc["paths"].as_object().expect("paths");
        let mut out = BTreeSet::new();
        for (path, item) in paths {
            for method in item.as_object().expect("path item").keys() {
                if ["get", "post", "put", "patch", "delete", "head", "options"]
                    .contains(&method.as_str())
                {
                    out.insert((method.clone(), path.clone()));
                }
            }
        }
        out
    }

    #[test]
    fn every_route_is_documented_and_every_documented_route_exists() {
        let routed = routed();
        let documented = documented();
        let missing: Vec<_> = routed.difference(&documented).collect();
        let extra: Vec<_> = documented.difference(&routed).collect();
        assert!(
            missing.is_empty(),
            "routes in router::ROUTES but not in worker/src/openapi.json: {missing:?}"
        );
        assert!(
            extra.is_empty(),
            "operations in worker/src/openapi.json with no route in router::ROUTES: {extra:?}"
        );
    }

    #[test]
    fn the_document_is_openapi_3_1_with_unique_operation_ids_and_resolvable_refs() {
        let doc: serde_json::Value = serde_json::from_str(DOCUMENT).unwrap();
        assert_eq!(doc["openapi"], "3.1.0");
        let mut ids = BTreeSet::new();
        for item in doc["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values() {
                let id = op["operationId"]
                    .as_str()
                    .expect("every operation has an operationId");
                assert!(ids.insert(id.to_string()), "duplicate operationId {id}");
                assert!(op["responses"].as_object().is_some_and(|r| !r.is_empty()));
            }
        }
        let mut refs = Vec::new();
        collect_refs(&doc, &mut refs);
        for r in refs {
            let pointer = r.strip_prefix('#').expect("local $ref");
            assert!(doc.pointer(pointer).is_some(), "unresolvable $ref {r}");
        }
    }

    fn collect_refs(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(m) => {
                if let Some(serde_json::Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|x| collect_refs(x, out));
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| collect_refs(x, out)),
            _ => {}
        }
    }

    #[test]
    fn a_pattern_becomes_an_openapi_path() {
        assert_eq!(
            openapi_path("/api/v1/log/:env/proof/inclusion"),
            "/api/v1/log/{env}/proof/inclusion"
        );
    }
}
