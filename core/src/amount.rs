//! Exact decimal money: `i128` counting units of 10^-18.
//!
//! Amounts never pass through `f64`. They are parsed from the text of a JSON
//! number token (or a decimal string), added with checked arithmetic, and
//! printed in the shortest plain form: `0.3`, `12`, `-4.25`.

use crate::error::FieldError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// Fractional decimal digits an amount keeps. // spec: DESIGN.md "up to 18 fractional digits"
pub const AMOUNT_FRACTION_DIGITS: u32 = 18;
/// One whole unit in scaled integer units.
const SCALE: i128 = 1_000_000_000_000_000_000;
/// Largest |delta| accepted on emit, in whole units. // spec: Limits, "delta value"
pub const DELTA_ABS_MAX_UNITS: i128 = 1_000_000_000;
/// Longest number text we try to read, in bytes. Any valid amount fits in
/// far fewer; the bound keeps a hostile 1 MB number from costing anything.
pub const AMOUNT_TEXT_BYTES_MAX: usize = 256;
/// Largest |exponent| in `1e3` forms we read: beyond it no amount is exact
/// and in range, so the text is rejected before any arithmetic.
const EXPONENT_ABS_MAX: i64 = 1_000;

/// An exact decimal amount (deltas, balances, sums).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Amount(i128);

/// Why a number text is not an amount.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmountError {
    #[error("must be a JSON number (digits, optional fraction and exponent)")]
    NotANumber,
    #[error("must have at most 18 decimal places")]
    TooPrecise,
    #[error("is out of the representable range")]
    OutOfRange,
    #[error("arithmetic overflow")]
    Overflow,
}

impl Amount {
    pub const ZERO: Amount = Amount(0);

    /// Parses the text of a JSON number token (`12`, `-4.25`, `1e3`,
    /// `2.5E-1`). Exponent forms are accepted when the value is exact.
    ///
    /// # Errors
    /// [`AmountError::NotANumber`] for anything outside the JSON number
    /// grammar (`NaN`, `Infinity`, `+1`, `01`, `.5`, quotes),
    /// [`AmountError::TooPrecise`] for more than 18 decimal places,
    /// [`AmountError::OutOfRange`] when it does not fit.
    pub fn parse(text: &str) -> Result<Amount, AmountError> {
        if text.len() > AMOUNT_TEXT_BYTES_MAX {
            return Err(AmountError::NotANumber);
        }
        let bytes = text.as_bytes();
        let mut i = 0;
        let negative = bytes.first() == Some(&b'-');
        if negative {
            i += 1;
        }
        let int_start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let int_digits = text.get(int_start..i).unwrap_or_default();
        if int_digits.is_empty() || (int_digits.len() > 1 && int_digits.starts_with('0')) {
            return Err(AmountError::NotANumber);
        }
        let mut frac_digits = "";
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            frac_digits = text.get(start..i).unwrap_or_default();
            if frac_digits.is_empty() {
                return Err(AmountError::NotANumber);
            }
        }
        let exponent = read_exponent(text, &mut i)?;
        if i != bytes.len() {
            return Err(AmountError::NotANumber);
        }

        // value = digits * 10^(exponent - frac_len); we need digits * 10^shift units.
        let mut digits: String = format!("{int_digits}{frac_digits}");
        let trimmed_len = digits.trim_end_matches('0').len();
        let mut shift: i64 = i64::from(AMOUNT_FRACTION_DIGITS) + exponent
            - i64::try_from(frac_digits.len()).map_err(|_| AmountError::NotANumber)?;
        shift += i64::try_from(digits.len() - trimmed_len).map_err(|_| AmountError::NotANumber)?;
        digits.truncate(trimmed_len);
        let digits = digits.trim_start_matches('0');
        if digits.is_empty() {
            return Ok(Amount::ZERO);
        }
        if shift < 0 {
            return Err(AmountError::TooPrecise);
        }
        // i128 holds at most 39 decimal digits.
        if digits.len() as i64 + shift > 39 {
            return Err(AmountError::OutOfRange);
        }
        let mut units: i128 = digits.parse().map_err(|_| AmountError::OutOfRange)?;
        for _ in 0..shift {
            units = units.checked_mul(10).ok_or(AmountError::OutOfRange)?;
        }
        Ok(Amount(if negative { -units } else { units }))
    }

    /// Parses a `delta` of an emit request: an amount that is non-zero and
    /// within ±1,000,000,000.
    ///
    /// # Errors
    /// A [`FieldError`] for `field` naming the rule broken.
    pub fn parse_delta(field: &str, text: &str) -> Result<Amount, FieldError> {
        let rule = "must be a non-zero number from -1000000000 to 1000000000 with at most 18 decimal places";
        let amount = Amount::parse(text).map_err(|e| match e {
            AmountError::TooPrecise => {
                FieldError::new(field, "must have at most 18 decimal places")
            }
            _ => FieldError::new(field, rule),
        })?;
        if amount.is_zero() {
            return Err(FieldError::new(field, "must be non-zero"));
        }
        if amount.0.unsigned_abs() > (DELTA_ABS_MAX_UNITS * SCALE).unsigned_abs() {
            return Err(FieldError::new(
                field,
                "must be from -1000000000 to 1000000000",
            ));
        }
        Ok(amount)
    }

    /// Parses any amount for a named field (balances in query and body).
    ///
    /// # Errors
    /// A [`FieldError`] for `field` naming the rule broken.
    pub fn parse_field(field: &str, text: &str) -> Result<Amount, FieldError> {
        Amount::parse(text).map_err(|e| FieldError::new(field, e.to_string()))
    }

    /// Reads the canonical decimal TEXT a database column holds.
    ///
    /// # Errors
    /// As [`Amount::parse`]; a stored value that fails is a corrupt row.
    pub fn from_db_text(text: &str) -> Result<Amount, AmountError> {
        Amount::parse(text)
    }

    /// The amount as `i128` units of 10^-18 (for tests and storage checks).
    pub fn to_units(self) -> i128 {
        self.0
    }

    pub fn from_units(units: i128) -> Amount {
        Amount(units)
    }

    /// A whole number of units, e.g. `Amount::from_int(12)` is `12`.
    ///
    /// # Errors
    /// [`AmountError::OutOfRange`] if it does not fit.
    pub fn from_int(whole: i64) -> Result<Amount, AmountError> {
        i128::from(whole)
            .checked_mul(SCALE)
            .map(Amount)
            .ok_or(AmountError::OutOfRange)
    }

    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// -1, 0 or 1.
    pub fn signum(self) -> i8 {
        match self.0 {
            0 => 0,
            x if x < 0 => -1,
            _ => 1,
        }
    }

    /// # Errors
    /// [`AmountError::Overflow`] instead of wrapping.
    pub fn checked_add(self, other: Amount) -> Result<Amount, AmountError> {
        self.0
            .checked_add(other.0)
            .map(Amount)
            .ok_or(AmountError::Overflow)
    }

    /// # Errors
    /// [`AmountError::Overflow`] instead of wrapping.
    pub fn checked_sub(self, other: Amount) -> Result<Amount, AmountError> {
        self.0
            .checked_sub(other.0)
            .map(Amount)
            .ok_or(AmountError::Overflow)
    }

    /// # Errors
    /// [`AmountError::Overflow`] for the one value with no negation.
    pub fn checked_neg(self) -> Result<Amount, AmountError> {
        self.0
            .checked_neg()
            .map(Amount)
            .ok_or(AmountError::Overflow)
    }

    /// Absolute value.
    ///
    /// # Errors
    /// [`AmountError::Overflow`] for the one value with no negation.
    pub fn checked_abs(self) -> Result<Amount, AmountError> {
        self.0
            .checked_abs()
            .map(Amount)
            .ok_or(AmountError::Overflow)
    }

    /// Sums amounts, failing on overflow.
    ///
    /// # Errors
    /// [`AmountError::Overflow`].
    pub fn checked_sum<I: IntoIterator<Item = Amount>>(items: I) -> Result<Amount, AmountError> {
        items
            .into_iter()
            .try_fold(Amount::ZERO, |acc, x| acc.checked_add(x))
    }
}

/// The exponent of an amount's text from byte `*i` (`e`/`E`, a sign,
/// digits), 0 when there is none; `*i` moves past it.
fn read_exponent(text: &str, i: &mut usize) -> Result<i64, AmountError> {
    let bytes = text.as_bytes();
    if !matches!(bytes.get(*i), Some(b'e' | b'E')) {
        return Ok(0);
    }
    *i += 1;
    let exp_negative = match bytes.get(*i) {
        Some(b'-') => {
            *i += 1;
            true
        }
        Some(b'+') => {
            *i += 1;
            false
        }
        _ => false,
    };
    let start = *i;
    while *i < bytes.len() && bytes[*i].is_ascii_digit() {
        *i += 1;
    }
    let exp_digits = text.get(start..*i).unwrap_or_default();
    if exp_digits.is_empty() {
        return Err(AmountError::NotANumber);
    }
    let magnitude = exp_digits.trim_start_matches('0').parse::<i64>().unwrap_or(
        if exp_digits.trim_start_matches('0').is_empty() {
            0
        } else {
            i64::MAX
        },
    );
    if magnitude > EXPONENT_ABS_MAX {
        // Either far too large or far too precise; tell which.
        return Err(if exp_negative {
            AmountError::TooPrecise
        } else {
            AmountError::OutOfRange
        });
    }
    Ok(if exp_negative { -magnitude } else { magnitude })
}

impl fmt::Display for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // All the digits of |units| (at least 19, so the 18 decimals are
        // there), then the point. Long division by 10^9 on 32-bit limbs:
        // 128-bit division and formatting cost the browser verifier ~3 KB.
        let abs = self.0.unsigned_abs();
        let mut limbs = [
            (abs >> 96) as u32,
            (abs >> 64) as u32,
            (abs >> 32) as u32,
            abs as u32,
        ];
        let mut chunks = [0u32; 5]; // 10^45 > 2^128
        for chunk in chunks.iter_mut().rev() {
            let mut rem = 0u64;
            for limb in &mut limbs {
                let cur = (rem << 32) | u64::from(*limb);
                *limb = (cur / 1_000_000_000) as u32;
                rem = cur % 1_000_000_000;
            }
            *chunk = rem as u32;
        }
        let mut digits = [b'0'; 45];
        for (i, chunk) in chunks.iter().enumerate() {
            let mut c = *chunk;
            for d in digits[i * 9..i * 9 + 9].iter_mut().rev() {
                *d = b'0' + (c % 10) as u8;
                c /= 10;
            }
        }
        let (whole, fraction) = digits.split_at(45 - 18);
        let first = whole
            .iter()
            .position(|&d| d != b'0')
            .unwrap_or(whole.len() - 1);
        let fraction_len = fraction
            .iter()
            .rposition(|&d| d != b'0')
            .map_or(0, |i| i + 1);
        if self.0 < 0 {
            f.write_str("-")?;
        }
        let mut text = String::with_capacity(48);
        text.extend(whole[first..].iter().map(|&d| char::from(d)));
        if fraction_len > 0 {
            text.push('.');
            text.extend(fraction[..fraction_len].iter().map(|&d| char::from(d)));
        }
        f.write_str(&text)
    }
}

impl fmt::Debug for Amount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Amount({self})")
    }
}

impl std::str::FromStr for Amount {
    type Err = AmountError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Amount::parse(s)
    }
}

/// Emits a JSON number token in canonical plain form (never a float).
/// Only serde_json understands the raw token; other serializers see a
/// struct, so amounts are always serialized with serde_json.
///
/// Serialize typed structs with `serde_json::to_string`/`to_vec`: going
/// through `serde_json::to_value` (or `json!`) turns the token into an
/// `f64` and rounds amounts with more than ~15 significant digits.
impl Serialize for Amount {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let raw = serde_json::value::RawValue::from_string(self.to_string())
            .map_err(serde::ser::Error::custom)?;
        raw.serialize(serializer)
    }
}

/// Accepts a JSON number token, read exactly from its text, or a decimal
/// string. Works with `serde_json::from_str`/`from_slice`; not through a
/// `serde_json::Value`, which would already have rounded the number.
impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<serde_json::value::RawValue>::deserialize(deserializer)?;
        let text = raw.get().trim();
        let parsed = if text.starts_with('"') {
            let inner: String = serde_json::from_str(text).map_err(serde::de::Error::custom)?;
            Amount::parse(&inner)
        } else {
            Amount::parse(text)
        };
        parsed.map_err(|e| serde::de::Error::custom(format!("amount {e}")))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn a(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    #[test]
    fn point_one_plus_point_two_is_point_three() {
        assert_eq!(a("0.1").checked_add(a("0.2")).unwrap(), a("0.3"));
        assert_eq!(a("0.1").checked_add(a("0.2")).unwrap().to_string(), "0.3");
    }

    #[test]
    fn canonical_form_is_plain_and_shortest() {
        for (input, printed) in [
            ("12", "12"),
            ("12.000", "12"),
            ("-4.25", "-4.25"),
            ("1e3", "1000"),
            ("1E+3", "1000"),
            ("2.5e-1", "0.25"),
            ("-0", "0"),
            ("0.000000000000000001", "0.000000000000000001"),
            ("1.50000000000000000000000", "1.5"),
            ("1000000000", "1000000000"),
            (
                "123456789.123456789123456789",
                "123456789.123456789123456789",
            ),
        ] {
            assert_eq!(a(input).to_string(), printed, "{input}");
        }
    }

    #[test]
    fn non_numbers_are_rejected() {
        for bad in [
            "",
            "-",
            "NaN",
            "Infinity",
            "-Infinity",
            "+1",
            "01",
            ".5",
            "5.",
            "1e",
            "1e+",
            "\"1\"",
            " 1",
            "1 ",
            "0x10",
            "1_000",
            "1,5",
            "--1",
        ] {
            assert_eq!(Amount::parse(bad), Err(AmountError::NotANumber), "{bad:?}");
        }
    }

    #[test]
    fn too_precise_and_too_large_are_rejected() {
        assert_eq!(
            Amount::parse("0.0000000000000000001"),
            Err(AmountError::TooPrecise)
        );
        assert_eq!(Amount::parse("1e-19"), Err(AmountError::TooPrecise));
        assert_eq!(Amount::parse("1e-100000"), Err(AmountError::TooPrecise));
        assert_eq!(Amount::parse("1e21"), Err(AmountError::OutOfRange));
        assert_eq!(
            Amount::parse("1e99999999999999999999"),
            Err(AmountError::OutOfRange)
        );
        assert_eq!(Amount::parse(&"9".repeat(40)), Err(AmountError::OutOfRange));
    }

    #[test]
    fn delta_rules_name_the_field() {
        assert_eq!(
            Amount::parse_delta("delta", "0").unwrap_err().to_string(),
            "delta: must be non-zero"
        );
        assert_eq!(
            Amount::parse_delta("delta", "1000000000.000000000000000001")
                .unwrap_err()
                .to_string(),
            "delta: must be from -1000000000 to 1000000000"
        );
        assert!(Amount::parse_delta("delta", "-1000000000").is_ok());
        assert!(Amount::parse_delta("delta", "1e9").is_ok());
        assert!(Amount::parse_delta("delta", "NaN")
            .unwrap_err()
            .to_string()
            .starts_with("delta: must be a non-zero number"));
    }

    #[test]
    fn overflow_is_an_error_not_a_wrap() {
        let max = Amount::from_units(i128::MAX);
        assert_eq!(
            max.checked_add(a("0.000000000000000001")),
            Err(AmountError::Overflow)
        );
        assert_eq!(
            Amount::from_units(i128::MIN).checked_neg(),
            Err(AmountError::Overflow)
        );
        assert_eq!(
            Amount::from_units(i128::MIN).checked_sub(a("1")),
            Err(AmountError::Overflow)
        );
    }

    #[test]
    fn serde_reads_number_tokens_exactly_and_writes_numbers() {
        let x: Amount = serde_json::from_str("0.1").unwrap();
        assert_eq!(x, a("0.1"));
        let big: Amount = serde_json::from_str("123456789.123456789123456789").unwrap();
        assert_eq!(big.to_string(), "123456789.123456789123456789");
        let s: Amount = serde_json::from_str("\"-4.25\"").unwrap();
        assert_eq!(s, a("-4.25"));
        assert!(serde_json::from_str::<Amount>("true").is_err());
        assert!(serde_json::from_str::<Amount>("\"abc\"").is_err());
        assert_eq!(serde_json::to_string(&a("-4.250")).unwrap(), "-4.25");
        #[derive(serde::Serialize, serde::Deserialize)]
        struct W {
            delta: Amount,
        }
        let w: W = serde_json::from_str(r#"{"delta": 1e3}"#).unwrap();
        assert_eq!(serde_json::to_string(&w).unwrap(), r#"{"delta":1000}"#);
    }

    fn any_amount() -> impl Strategy<Value = Amount> {
        // Within ±10^19 whole units so that sums of three never overflow.
        (-(10i128.pow(37))..10i128.pow(37)).prop_map(Amount::from_units)
    }

    /// Display as it was written with 128-bit division: the reference.
    fn reference_display(units: i128) -> String {
        let abs = units.unsigned_abs();
        let scale = SCALE.unsigned_abs();
        let (whole, fraction) = (abs / scale, abs % scale);
        let sign = if units < 0 { "-" } else { "" };
        if fraction == 0 {
            format!("{sign}{whole}")
        } else {
            format!(
                "{sign}{whole}.{}",
                format!("{fraction:018}").trim_end_matches('0')
            )
        }
    }

    #[test]
    fn display_of_extremes() {
        for units in [
            0,
            1,
            -1,
            i128::MAX,
            i128::MIN,
            SCALE,
            -SCALE,
            SCALE - 1,
            10 * SCALE + 5,
        ] {
            assert_eq!(
                Amount(units).to_string(),
                reference_display(units),
                "{units}"
            );
        }
    }

    proptest! {
        #[test]
        fn display_is_the_exact_decimal(units in any::<i128>(), small in any::<i64>()) {
            prop_assert_eq!(Amount(units).to_string(), reference_display(units));
            prop_assert_eq!(Amount(i128::from(small)).to_string(), reference_display(i128::from(small)));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn parse_of_print_is_identity(x in any::<i128>()) {
            let amount = Amount::from_units(x);
            prop_assert_eq!(Amount::parse(&amount.to_string()), Ok(amount));
            prop_assert_eq!(Amount::from_db_text(&amount.to_string()), Ok(amount));
            let json = serde_json::to_string(&amount).unwrap();
            prop_assert_eq!(serde_json::from_str::<Amount>(&json).unwrap(), amount);
        }

        #[test]
        fn sums_are_associative_and_commutative(x in any_amount(), y in any_amount(), z in any_amount()) {
            let left = x.checked_add(y).unwrap().checked_add(z).unwrap();
            let right = x.checked_add(y.checked_add(z).unwrap()).unwrap();
            prop_assert_eq!(left, right);
            prop_assert_eq!(x.checked_add(y).unwrap(), y.checked_add(x).unwrap());
            prop_assert_eq!(x.checked_add(y).unwrap().checked_sub(y).unwrap(), x);
        }

        #[test]
        fn exponent_forms_agree_with_plain_forms(m in -999_999i64..999_999, e in -6i32..6) {
            let text = format!("{m}e{e}");
            let plain = if e >= 0 {
                Amount::from_int(m).unwrap().to_units() * 10i128.pow(e.unsigned_abs())
            } else {
                Amount::from_int(m).unwrap().to_units() / 10i128.pow(e.unsigned_abs())
            };
            prop_assert_eq!(Amount::parse(&text).unwrap().to_units(), plain);
        }

        #[test]
        fn arbitrary_text_never_panics(s in ".{0,40}") {
            let _ = Amount::parse(&s);
        }
    }
}
