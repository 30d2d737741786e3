//! ISO 8601 / RFC 3339 timestamps as unix milliseconds, UTC, no clock.
//!
//! Uses the days-from-civil algorithm (H. Hinnant) rather than a date crate:
//! it is twenty lines, exact over years 0..=9999, and needs no std time.

use std::fmt::Write as _;

/// Milliseconds in a day.
pub const DAY_MS: i64 = 86_400_000;
/// Earliest instant we print or parse: 0000-01-01T00:00:00.000Z.
pub const TIMESTAMP_MIN_MS: i64 = -62_167_219_200_000;
/// Latest instant we print or parse: 9999-12-31T23:59:59.999Z.
pub const TIMESTAMP_MAX_MS: i64 = 253_402_300_799_999;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TimeError {
    #[error("must be an ISO 8601 timestamp like 2026-01-31T12:00:00.000Z")]
    Format,
    #[error("must be a real calendar date and time")]
    NotADate,
    #[error("must be between years 0000 and 9999")]
    OutOfRange,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (month 1..=12).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month 1..=12, day 1..=31) of a day count since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    // Both fit: day is 1..=31 and month 1..=12 by construction.
    (year, month as u32, day as u32)
}

pub fn is_leap_year(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

pub fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// `2026-11-22T04:56:40.123Z`. Instants outside years 0..=9999 are clamped
/// to the nearest end, which no stored timestamp of this service reaches.
pub fn format_iso_ms(unix_ms: i64) -> String {
    let ms = unix_ms.clamp(TIMESTAMP_MIN_MS, TIMESTAMP_MAX_MS);
    let days = ms.div_euclid(DAY_MS);
    let in_day = ms.rem_euclid(DAY_MS);
    let (year, month, day) = civil_from_days(days);
    let mut out = String::with_capacity(24);
    let _ = write!(
        out,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        in_day / 3_600_000,
        in_day / 60_000 % 60,
        in_day / 1000 % 60,
        in_day % 1000
    );
    out
}

fn digits(bytes: &[u8], range: std::ops::Range<usize>) -> Result<i64, TimeError> {
    let part = bytes.get(range).ok_or(TimeError::Format)?;
    if part.is_empty() || !part.iter().all(u8::is_ascii_digit) {
        return Err(TimeError::Format);
    }
    Ok(part
        .iter()
        .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
}

/// Parses an RFC 3339 timestamp (`2026-01-31T12:00:00Z`,
/// `2026-01-31T12:00:00.123456+02:00`) to unix milliseconds. Fractions
/// finer than a millisecond are truncated: the service keeps milliseconds.
///
/// # Errors
/// [`TimeError`] saying whether the form, the date or the range is wrong.
pub fn parse_iso_ms(text: &str) -> Result<i64, TimeError> {
    let b = text.as_bytes();
    if b.len() < 20 || b.len() > 40 {
        return Err(TimeError::Format);
    }
    let sep_ok = b[4] == b'-'
        && b[7] == b'-'
        && matches!(b[10], b'T' | b't' | b' ')
        && b[13] == b':'
        && b[16] == b':';
    if !sep_ok {
        return Err(TimeError::Format);
    }
    let year = digits(b, 0..4)?;
    let month = digits(b, 5..7)?;
    let day = digits(b, 8..10)?;
    let hour = digits(b, 11..13)?;
    let minute = digits(b, 14..16)?;
    let second = digits(b, 17..19)?;
    let mut i = 19;
    let mut millis = 0i64;
    if b.get(i) == Some(&b'.') {
        let start = i + 1;
        let mut end = start;
        while end < b.len() && b[end].is_ascii_digit() {
            end += 1;
        }
        if end == start || end - start > 9 {
            return Err(TimeError::Format);
        }
        let frac = &b[start..end];
        for k in 0..3 {
            millis = millis * 10 + frac.get(k).map_or(0, |d| i64::from(d - b'0'));
        }
        i = end;
    }
    let offset_minutes = offset_minutes(b, i)?;
    let month_u = u32::try_from(month).map_err(|_| TimeError::NotADate)?;
    let day_u = u32::try_from(day).map_err(|_| TimeError::NotADate)?;
    if !(1..=12).contains(&month_u)
        || day_u < 1
        || day_u > days_in_month(year, month_u)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return Err(TimeError::NotADate);
    }
    let days = days_from_civil(year, month_u, day_u);
    let ms = days * DAY_MS + ((hour * 60 + minute - offset_minutes) * 60 + second) * 1000 + millis;
    if !(TIMESTAMP_MIN_MS..=TIMESTAMP_MAX_MS).contains(&ms) {
        return Err(TimeError::OutOfRange);
    }
    Ok(ms)
}

/// The offset of a timestamp whose offset starts at byte `i` (`Z`, or
/// `+hh:mm`/`-hh:mm` ending the text), in minutes east of UTC.
fn offset_minutes(b: &[u8], i: usize) -> Result<i64, TimeError> {
    match b.get(i) {
        Some(b'Z' | b'z') if i + 1 == b.len() => Ok(0),
        Some(sign @ (b'+' | b'-')) if i + 6 == b.len() && b[i + 3] == b':' => {
            let oh = digits(b, i + 1..i + 3)?;
            let om = digits(b, i + 4..i + 6)?;
            if oh > 23 || om > 59 {
                return Err(TimeError::NotADate);
            }
            let total = oh * 60 + om;
            Ok(if *sign == b'-' { -total } else { total })
        }
        _ => Err(TimeError::Format),
    }
}

/// `#[serde(with = "bvs_core::time::iso_ms")]` for `i64` unix-ms fields
/// that appear in JSON as ISO 8601 strings.
pub mod iso_ms {
    use serde::{Deserialize, Deserializer, Serializer};

    /// # Errors
    /// Never, beyond the serializer's own.
    pub fn serialize<S: Serializer>(ms: &i64, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&super::format_iso_ms(*ms))
    }

    /// # Errors
    /// If the string is not an RFC 3339 timestamp.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        super::parse_iso_ms(&text).map_err(|e| serde::de::Error::custom(format!("timestamp {e}")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_instants() {
        assert_eq!(format_iso_ms(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(format_iso_ms(1_795_323_400_123), "2026-11-22T04:56:40.123Z");
        assert_eq!(format_iso_ms(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(format_iso_ms(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            parse_iso_ms("2026-11-22T04:56:40.123Z"),
            Ok(1_795_323_400_123)
        );
        assert_eq!(
            parse_iso_ms("2026-11-22T06:56:40.123456+02:00"),
            Ok(1_795_323_400_123)
        );
        assert_eq!(parse_iso_ms("2026-11-22t04:56:40z"), Ok(1_795_323_400_000));
        assert_eq!(parse_iso_ms("0000-01-01T00:00:00Z"), Ok(TIMESTAMP_MIN_MS));
        assert_eq!(
            parse_iso_ms("9999-12-31T23:59:59.999Z"),
            Ok(TIMESTAMP_MAX_MS)
        );
    }

    #[test]
    fn bad_timestamps_say_why() {
        for bad in [
            "",
            "2026-11-22",
            "2026-11-22T04:56:40",
            "2026/11/22T04:56:40Z",
            "2026-11-22T04:56:40.Z",
            "2026-11-22T04:56:40+0200",
            "２０２６-11-22T04:56:40Z",
        ] {
            assert_eq!(parse_iso_ms(bad), Err(TimeError::Format), "{bad}");
        }
        for bad in [
            "2026-02-29T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:60Z",
        ] {
            assert_eq!(parse_iso_ms(bad), Err(TimeError::NotADate), "{bad}");
        }
        assert_eq!(
            parse_iso_ms("0000-01-01T00:00:00+01:00"),
            Err(TimeError::OutOfRange)
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]
        #[test]
        fn parse_of_format_is_identity(ms in TIMESTAMP_MIN_MS..=TIMESTAMP_MAX_MS) {
            prop_assert_eq!(parse_iso_ms(&format_iso_ms(ms)), Ok(ms));
        }

        #[test]
        fn days_round_trip(days in -800_000i64..3_000_000) {
            let (y, m, d) = civil_from_days(days);
            prop_assert_eq!(days_from_civil(y, m, d), days);
        }

        #[test]
        fn arbitrary_text_never_panics(s in ".{0,45}") {
            let _ = parse_iso_ms(&s);
        }
    }
}
