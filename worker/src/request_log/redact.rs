//! What the request log keeps of a body or a query: secrets masked, then
//! cut to [`BODY_BYTES_MAX`].
//!
//! Invariant: no logged body or path holds a password, an API-key secret, a
//! webhook secret, a JWT or an e-mail or invitation token. Two rules, both
//! over the raw text, so a body that is not valid JSON (the very request a
//! vendor is debugging) is masked as well as a valid one:
//! - the string (or number) value of a member whose name is a secret's
//!   ([`SECRET_NAMES`], compared without case, `-` or `_`, after undoing
//!   every JSON escape, as the handler's parser reads it) becomes
//!   `"[redacted]"`;
//! - inside every string, anything shaped like a secret ([`mask_tokens`]:
//!   `pk_<env>_<id>.<secret>` keeps its key id, `whsec_…`, `inv_<env>_…`,
//!   a JWT) is masked.
//!
//! A query string's values, and a form-encoded body's (`name=value&...`,
//! any body whose first character opens no JSON value), are masked the
//! same way: by name, then by shape, each decoded (`%XX`, `+`) first.

/// Bytes kept of each body (request and response) after masking.
pub const BODY_BYTES_MAX: usize = 4096;
/// Bytes of a body read before masking: anything past [`BODY_BYTES_MAX`]
/// is cut anyway, so a 4 MB body costs no more than this.
pub const BODY_SCAN_BYTES_MAX: usize = 16 * 1024;
/// Bytes kept of a path with its query.
pub const PATH_BYTES_MAX: usize = 512;

const REDACTED: &str = "[redacted]";

/// Member names whose values are secrets, lowercase without `-` and `_`.
pub const SECRET_NAMES: &[&str] = &[
    "password",
    "currentpassword",
    "newpassword",
    "token",
    "secret",
    "key",
    "apikey",
    "xapikey",
    "authorization",
    "jwt",
    "signature",
];

/// The longest of [`SECRET_NAMES`], folded, fits this many bytes.
const SECRET_NAME_BYTES_MAX: usize = 16;

/// Whether `name`, compared without case, `-` or `_`, is a secret's. No
/// allocation: the request log asks it of every member name of a body.
fn is_secret_name(name: &str) -> bool {
    let mut folded = [0u8; SECRET_NAME_BYTES_MAX];
    let mut len = 0;
    if name.is_ascii() {
        // Every member name of a delta is ASCII: folded byte by byte.
        for b in name.bytes().filter(|b| *b != b'-' && *b != b'_') {
            if len == SECRET_NAME_BYTES_MAX {
                return false;
            }
            folded[len] = b.to_ascii_lowercase();
            len += 1;
        }
        return SECRET_NAMES.iter().any(|n| n.as_bytes() == &folded[..len]);
    }
    for lower in name
        .chars()
        .filter(|c| *c != '-' && *c != '_')
        .flat_map(char::to_lowercase)
    {
        // Every secret name is short ASCII: anything else is not one.
        if !lower.is_ascii() || len == SECRET_NAME_BYTES_MAX {
            return false;
        }
        folded[len] = lower as u8;
        len += 1;
    }
    SECRET_NAMES.iter().any(|n| n.as_bytes() == &folded[..len])
}

/// Whether a member name as written in JSON is a secret's, compared as a
/// JSON parser reads it (issue 40): every escape a parser accepts
/// (`\u0077`, a surrogate pair, `\/`, `\b`, ...) is undone first, so
/// `"pass\u0077ord"` is the `password` serde hands the handler. A name
/// whose escapes do not decode is no JSON a handler reads, and is
/// compared as written.
fn is_secret_member(raw: &str) -> bool {
    if !raw.contains('\\') {
        return is_secret_name(raw);
    }
    match decode_json_string(raw) {
        Some(name) => is_secret_name(&name),
        None => is_secret_name(raw),
    }
}

/// The text of a JSON string literal's inside, its escapes undone as
/// RFC 8259 §7 reads them; `None` for an escape no parser accepts.
fn decode_json_string(raw: &str) -> Option<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars();
    let hex4 = |chars: &mut std::str::Chars<'_>| -> Option<u32> {
        let text: String = chars.by_ref().take(4).collect();
        (text.len() == 4)
            .then(|| u32::from_str_radix(&text, 16).ok())
            .flatten()
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let decoded = match chars.next()? {
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'u' => {
                let first = hex4(&mut chars)?;
                if (0xD800..0xDC00).contains(&first) {
                    // A high surrogate: its low half must follow.
                    if chars.next()? != '\\' || chars.next()? != 'u' {
                        return None;
                    }
                    let low = hex4(&mut chars)?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    char::from_u32(0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00))?
                } else {
                    char::from_u32(first)?
                }
            }
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

/// Whether a text reads as a form-encoded body (`name=value&...`) rather
/// than JSON: its first non-space character opens no JSON value, and it
/// has a `=`.
fn is_form_encoded(text: &str) -> bool {
    let first = text.trim_start().chars().next();
    !matches!(first, None | Some('{' | '[' | '"')) && text.contains('=')
}

/// A form-encoded name or value as a server reads it: `+` is a space and
/// `%XX` a byte (kept as written where it is no valid hex or UTF-8).
fn form_decode(raw: &str) -> String {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'+', _, _) => out.push(b' '),
            (b'%', Some(hi), Some(lo)) => {
                // Two hex digits: below 256 by construction.
                out.push(u8::try_from(hi * 16 + lo).unwrap_or(b'%'));
                i += 2;
            }
            (b, _, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| raw.to_owned())
}

/// Masks a form-encoded text (a body or a query): the value of a
/// secret-named pair (its name decoded), and secret shapes in every
/// pair, decoded or as written.
fn mask_form(text: &str) -> String {
    text.split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, value))
                if is_secret_name(&form_decode(name)) || holds_token(&form_decode(value)) =>
            {
                format!("{name}={REDACTED}")
            }
            _ => mask_tokens(pair),
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A body as the log keeps it: masked, then cut; `None` for an empty one.
pub fn body(raw: &[u8]) -> Option<String> {
    body_of(raw, raw.len())
}

/// Like [`body`], given the body's first bytes (at least
/// [`BODY_SCAN_BYTES_MAX`] of them, when it has that many) and its length.
pub fn body_of(start: &[u8], total: usize) -> Option<String> {
    if start.is_empty() {
        return None;
    }
    let scanned = &start[..start.len().min(BODY_SCAN_BYTES_MAX)];
    let text = String::from_utf8_lossy(scanned);
    let masked = if is_form_encoded(&text) {
        mask_form(&text)
    } else {
        mask_json_text_upto(&text, BODY_BYTES_MAX + MASK_MARGIN_BYTES)
    };
    Some(cut(&masked, total, BODY_BYTES_MAX))
}

/// Masked text past [`BODY_BYTES_MAX`] that masking goes on to produce
/// before it stops: room for secrets in it to shrink to `[redacted]` and
/// still leave [`BODY_BYTES_MAX`] bytes to keep.
const MASK_MARGIN_BYTES: usize = 1024;

/// `text` cut to `max` bytes at a character boundary, saying how long the
/// original (`total` bytes) was when it is cut.
fn cut(text: &str, total: usize, max: usize) -> String {
    if text.len() <= max && total <= text.len() {
        return text.to_string();
    }
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… [cut: {total} bytes in all]", &text[..end])
}

/// A path with its query as the log keeps it.
pub fn path(path: &str, query: Option<&str>) -> String {
    let Some(query) = query.filter(|q| !q.is_empty()) else {
        return cut(&mask_tokens(path), path.len(), PATH_BYTES_MAX);
    };
    let full = format!("{}?{}", mask_tokens(path), mask_form(query));
    cut(&full, full.len(), PATH_BYTES_MAX)
}

/// A whole text masked ([`mask_json_text_upto`] with no limit).
#[cfg(test)]
pub fn mask_json_text(text: &str) -> String {
    mask_json_text_upto(text, usize::MAX)
}

/// Masks a JSON(-like) text: secret-named members' values, and secret
/// shapes anywhere. Works on any text: an unterminated string runs to the
/// end. Stops once it has produced `limit` bytes, at the start of a string (a secret is masked whole or not reached: no token
/// is ever split by the stop). The log keeps a body's first
/// [`BODY_BYTES_MAX`] bytes, so masking the rest of a 16 KiB batch would be
/// work thrown away.
fn mask_json_text_upto(text: &str, limit: usize) -> String {
    let mut out = String::with_capacity(text.len().min(limit.saturating_add(64)));
    let mut rest = text;
    // Set after a secret-named member's `:`: its value is masked.
    let mut mask_next_value = false;
    loop {
        if !mask_next_value {
            // Up to the next string nothing changes: copy it in one piece.
            let quote = rest.find('"').unwrap_or(rest.len());
            out.push_str(&rest[..quote]);
            rest = &rest[quote..];
            if out.len() >= limit {
                break;
            }
        }
        let Some(c) = rest.chars().next() else { break };
        if c == '"' {
            let (inner, after, closed) = string_literal(&rest[1..]);
            let is_name = after.trim_start().starts_with(':');
            if mask_next_value && !is_name {
                out.push('"');
                out.push_str(REDACTED);
                out.push('"');
                mask_next_value = false;
            } else if !is_name && hides_a_secret_shape(inner) {
                // A token written with escapes (`whsec\u005f…`): the
                // shapes are matched on the text as parsed.
                out.push('"');
                out.push_str(REDACTED);
                out.push('"');
            } else {
                out.push('"');
                out.push_str(inner);
                if closed {
                    out.push('"');
                }
                mask_next_value = is_name && is_secret_member(inner);
            }
            rest = after;
            continue;
        }
        if mask_next_value && (c == '-' || c.is_ascii_digit()) {
            // A number (or other bare token) as a secret's value.
            let end = rest
                .find(|ch: char| matches!(ch, ',' | '}' | ']') || ch.is_whitespace())
                .unwrap_or(rest.len());
            out.push('"');
            out.push_str(REDACTED);
            out.push('"');
            rest = &rest[end..];
            mask_next_value = false;
            continue;
        }
        if !(c.is_whitespace() || c == ':') {
            mask_next_value = false;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    // Secret shapes anywhere, inside strings or not (a body that is not
    // JSON may hold a bare key); masking twice changes nothing.
    mask_tokens(&out)
}

/// Whether a string written with escapes decodes to text holding a
/// secret's shape (which [`mask_tokens`] then cannot see as written).
fn hides_a_secret_shape(raw: &str) -> bool {
    raw.contains('\\') && decode_json_string(raw).is_some_and(|text| holds_token(&text))
}

/// Whether `text` holds a secret's shape ([`mask_tokens`] would change it).
fn holds_token(text: &str) -> bool {
    mask_tokens(text) != text
}

/// The inside of a string literal whose opening quote was just read: its
/// raw text, what follows its closing quote, and whether it was closed.
fn string_literal(s: &str) -> (&str, &str, bool) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return (&s[..i], &s[i + 1..], true),
            _ => i += 1,
        }
    }
    (s, "", false)
}

fn is_token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

/// Masks secret shapes inside a text: an API key's secret (`pk_test_<id>.`
/// keeps its id, the part after the dot is masked), `whsec_…`,
/// `inv_test_…`/`inv_live_…` (the whole token), and JWTs (`eyJ….eyJ….…`).
pub fn mask_tokens(text: &str) -> String {
    if !["pk_", "whsec_", "inv_", "eyJ"]
        .iter()
        .any(|p| text.contains(p))
    {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let at_word_start = i == 0 || !is_token_char(bytes[i - 1]);
        let masked = if at_word_start {
            secret_at(&text[i..])
        } else {
            None
        };
        match masked {
            Some((keep, len)) => {
                out.push_str(&text[copied..i]);
                out.push_str(&text[i..i + keep]);
                out.push_str(REDACTED);
                i += len;
                copied = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// At the start of `s`, a secret: (bytes kept, bytes it spans).
fn secret_at(s: &str) -> Option<(usize, usize)> {
    let run = |from: usize, extra: &[u8]| -> usize {
        s.as_bytes()[from..]
            .iter()
            .take_while(|b| is_token_char(**b) || extra.contains(b))
            .count()
    };
    for prefix in ["pk_test_", "pk_live_"] {
        if s.starts_with(prefix) {
            let id = run(prefix.len(), &[]);
            let dot = prefix.len() + id;
            if id > 0 && s.as_bytes().get(dot) == Some(&b'.') {
                let secret = run(dot + 1, &[]);
                if secret > 0 {
                    return Some((dot + 1, dot + 1 + secret));
                }
            }
            return None;
        }
    }
    if s.starts_with("whsec_") {
        let n = run(6, &[]);
        return (n > 0).then_some((6, 6 + n));
    }
    for prefix in ["inv_test_", "inv_live_"] {
        if s.starts_with(prefix) {
            let n = run(prefix.len(), b"_");
            return (n > 0).then_some((prefix.len(), prefix.len() + n));
        }
    }
    if s.starts_with("eyJ") {
        let n = run(0, b"-_.");
        let dots = s.as_bytes()[..n].iter().filter(|b| **b == b'.').count();
        return (dots >= 2).then_some((0, n));
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const KEY: &str = "pk_test_AbCdEfGhIjKlMnOp.0123456789abcdefghijABCDEFGHIJkl";

    #[test]
    fn secret_members_are_masked_by_name_whatever_their_case() {
        let body = r#"{"email":"a@b.c","password":"Hunter-22","New_Password":"X","Token": "t0k"}"#;
        let out = mask_json_text(body);
        assert_eq!(
            out,
            r#"{"email":"a@b.c","password":"[redacted]","New_Password":"[redacted]","Token": "[redacted]"}"#
        );
    }

    #[test]
    fn an_api_key_keeps_its_id_and_loses_its_secret_anywhere_in_a_string() {
        let body = format!(r#"{{"reason":"paid with {KEY} today","note":"{KEY}"}}"#);
        let out = mask_json_text(&body);
        assert!(!out.contains("0123456789abcdefghij"), "{out}");
        assert!(
            out.contains("pk_test_AbCdEfGhIjKlMnOp.[redacted] today"),
            "{out}"
        );
    }

    #[test]
    fn webhook_secrets_invitation_tokens_and_jwts_are_masked() {
        let text = "whsec_abcDEF123 inv_test_1_QWErty123 eyJhbGciOi.eyJzdWIi.c2lnbmF0dXJl";
        let out = mask_tokens(text);
        assert_eq!(out, "whsec_[redacted] inv_test_[redacted] [redacted]");
    }

    #[test]
    fn a_body_that_is_not_json_is_masked_too() {
        let body = format!(r#"{{"password": "oops", "customerId": "c" "delta": {KEY}"#);
        let out = body_text(&body);
        assert!(out.contains(r#""password": "[redacted]""#), "{out}");
        assert!(!out.contains("0123456789abcdefghij"), "{out}");
        // An unterminated string runs to the end, masked.
        let out = body_text(r#"{"secret":"whsec_abc"#);
        assert!(!out.contains("whsec_abc"), "{out}");
    }

    #[test]
    fn a_numeric_secret_is_masked_and_other_values_stay() {
        let out = mask_json_text(r#"{"key": 12345, "delta": -3.5, "keys": ["a"]}"#);
        assert_eq!(
            out,
            r#"{"key": "[redacted]", "delta": -3.5, "keys": ["a"]}"#
        );
    }

    #[test]
    fn a_value_named_like_a_secret_is_not_a_secret() {
        // "token" here is a value, not a member name.
        let out = mask_json_text(r#"{"reason":"token","x":"y"}"#);
        assert_eq!(out, r#"{"reason":"token","x":"y"}"#);
    }

    #[test]
    fn long_bodies_are_cut_and_say_so() {
        let raw = format!(r#"{{"reason":"{}"}}"#, "a".repeat(10_000));
        let out = body(raw.as_bytes()).unwrap();
        assert!(out.len() < BODY_BYTES_MAX + 64, "{}", out.len());
        assert!(
            out.ends_with(&format!("[cut: {} bytes in all]", raw.len())),
            "{out}"
        );
        assert_eq!(body(b""), None);
        let short = body(br#"{"a":1}"#).unwrap();
        assert_eq!(short, r#"{"a":1}"#);
    }

    /// Masking stops once it has what the log keeps: a batch's body cut
    /// after its first 4 KiB reads the same as masking it whole and
    /// cutting, secrets before the cut masked and none split by the stop.
    #[test]
    fn masking_stops_after_what_is_kept_and_keeps_the_same_bytes() {
        let item = format!(r#"{{"customerId":"c","delta":"1.5","note":"{KEY}","token":"t0k"}}"#);
        let raw = format!("[{}]", vec![item; 200].join(","));
        assert!(raw.len() > BODY_SCAN_BYTES_MAX);
        let whole = cut(
            &mask_json_text(&String::from_utf8_lossy(
                &raw.as_bytes()[..BODY_SCAN_BYTES_MAX],
            )),
            raw.len(),
            BODY_BYTES_MAX,
        );
        let early = body_of(raw.as_bytes(), raw.len()).unwrap();
        assert_eq!(early, whole);
        assert!(!early.contains("0123456789abcdefghij"), "{early}");
        assert!(!early.contains("t0k"), "{early}");
        let stopped = mask_json_text_upto(&raw, 100);
        assert!(
            stopped.len() < 200 && stopped.ends_with([':', ',', '{']),
            "{stopped}"
        );
    }

    #[test]
    fn query_values_are_masked_by_name_and_shape() {
        assert_eq!(
            path("/dashboard/auth/verify", Some("token=abc&x=1")),
            "/dashboard/auth/verify?token=[redacted]&x=1"
        );
        let p = path("/api/v1/x", Some(&format!("q={KEY}")));
        assert!(!p.contains("0123456789abcdefghij"), "{p}");
        assert_eq!(path("/api/v1/x", None), "/api/v1/x");
    }

    /// The member-name check allocates nothing, and answers as folding
    /// the whole name would: case (Unicode's too: the Kelvin sign folds to
    /// `k`), `-` and `_` aside; a name too long is none. A name with
    /// escapes is compared as a parser reads it (issue 40: before, the
    /// escaped `pass\u0077ord` was kept in clear).
    #[test]
    fn member_names_fold_like_the_whole_name_would() {
        for name in ["KEY", "api-key", "X_Api_Key", "\u{212A}ey", "new_password"] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in [
            "keys",
            "customerId",
            "monkey",
            "pass word",
            "passwordpasswordx",
        ] {
            assert!(!is_secret_name(name), "{name}");
        }
        let kelvin = '\u{212A}';
        let out = mask_json_text(&format!(
            r#"{{"pass\u0077ord":"a","Toke\"n":"b","{kelvin}ey":"c"}}"#
        ));
        assert_eq!(
            out,
            format!(r#"{{"pass\u0077ord":"[redacted]","Toke\"n":"b","{kelvin}ey":"[redacted]"}}"#)
        );
    }

    /// Every escape a JSON parser accepts in a member name: one character
    /// or all of them as `\uXXXX` (either case of hex), `\/`, a surrogate
    /// pair that decodes to no secret; a value written with escapes that
    /// decodes to a token's shape is masked too.
    #[test]
    fn escaped_secret_names_and_tokens_are_masked_as_parsed() {
        let every_char = |name: &str, upper: bool| -> String {
            name.chars()
                .map(|c| {
                    if upper {
                        format!("\\u{:04X}", c as u32)
                    } else {
                        format!("\\u{:04x}", c as u32)
                    }
                })
                .collect()
        };
        for name in SECRET_NAMES {
            for written in [
                every_char(name, false),
                every_char(name, true),
                format!(
                    "{}\\u{:04x}",
                    &name[..name.len() - 1],
                    name.as_bytes()[name.len() - 1]
                ),
            ] {
                let out = mask_json_text(&format!(r#"{{"{written}":"s3cr3t","a":"b"}}"#));
                assert!(!out.contains("s3cr3t"), "{written}: {out}");
                assert!(out.contains(r#""a":"b""#), "{out}");
            }
        }
        assert!(is_secret_member("new\\u0050assword"));
        assert!(is_secret_member("api\\/key") == is_secret_name("api/key"));
        assert!(!is_secret_member("\\ud83d\\ude00"));
        // Dashes and underscores are folded away however many, escaped too.
        assert!(is_secret_member(&format!(
            "{}password",
            "\\u002d".repeat(40)
        )));
        assert!(!is_secret_member("\\ud83d"));
        let out = mask_json_text(r#"{"note":"whsec\u005fabcDEF123"}"#);
        assert_eq!(out, r#"{"note":"[redacted]"}"#);
    }

    /// A form-encoded body is masked by its decoded names, and by the
    /// shapes of its decoded values.
    #[test]
    fn form_encoded_bodies_and_queries_are_masked_by_decoded_name() {
        let out = body_text("email=a%40b.c&password=Hunter-22&new%5Fpassword=X&pass%77ord=Y&x=1");
        assert_eq!(
            out,
            "email=a%40b.c&password=[redacted]&new%5Fpassword=[redacted]&pass%77ord=[redacted]&x=1"
        );
        let out = body_text("note=whsec%5Fabc123&Token+=t");
        assert!(!out.contains("abc123"), "{out}");
        assert!(
            path("/x", Some("pass%77ord=abc&ok=1")).ends_with("?pass%77ord=[redacted]&ok=1"),
            "{}",
            path("/x", Some("pass%77ord=abc&ok=1"))
        );
        assert_eq!(form_decode("a%2"), "a%2");
        assert_eq!(form_decode("%zz+%41"), "%zz A");
    }

    /// Text between strings is copied as it is, and a secret's value that
    /// follows a space or a newline is still masked.
    #[test]
    fn text_between_strings_is_kept_and_spaced_values_are_masked() {
        let out = body_text("[1, 2,\n {\"secret\" :\n  \"s3\", \"n\": -4.5e3}]");
        assert_eq!(
            out,
            "[1, 2,\n {\"secret\" :\n  \"[redacted]\", \"n\": -4.5e3}]"
        );
        let out = body_text("{\"key\": 12345, \"a\": true}");
        assert_eq!(out, "{\"key\": \"[redacted]\", \"a\": true}");
    }

    fn body_text(s: &str) -> String {
        body(s.as_bytes()).unwrap()
    }
}
