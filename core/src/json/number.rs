//! RFC 8785 number form without floating point: a JSON number token to the
//! ECMAScript `Number::toString` text of the double it denotes.
//!
//! Why not `str::parse::<f64>` and `{:e}`: in WebAssembly those bring
//! ~40 KB of tables and Grisu/Dragon code, a third of the browser
//! verifier. Here most tokens take the short path (at most 15 significant
//! digits in the normal range: the token's own digits are the answer,
//! since any such decimal survives the round trip through a double); the
//! rest are rounded exactly with small big-integer arithmetic. Tests hold
//! both paths to the standard library's parse printed by
//! serde_json_canonicalizer (ryu-js), which is what JavaScript prints.

/// Largest decimal exponent kept exact; beyond it a value is 0 or too large
/// for a double either way (doubles span about 10^-324 to 10^308).
const DECIMAL_EXPONENT_ABS_MAX: i64 = 400;
/// Significant digits every decimal in the normal range keeps through a
/// double (DBL_DIG).
const ROUND_TRIP_DIGITS_MAX: usize = 15;
/// Smallest binary exponent of a double's last mantissa bit (subnormals).
const BINARY_EXPONENT_MIN: i64 = -1074;
/// Largest binary exponent of a double's last mantissa bit.
const BINARY_EXPONENT_MAX: i64 = 971;

/// The ECMAScript text of the double nearest the JSON number `token`, or
/// `None` when it rounds beyond the largest finite double.
pub(super) fn canonical(token: &str) -> Option<String> {
    let negative = token.starts_with('-');
    let unsigned = token.trim_start_matches('-');
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (
            unsigned.get(..i).unwrap_or_default(),
            unsigned.get(i + 1..).unwrap_or_default(),
        ),
        None => (unsigned, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all: String = int.chars().chain(frac.chars()).collect();
    let digits = all.trim_start_matches('0');
    let trimmed = digits.trim_end_matches('0');
    if trimmed.is_empty() {
        return Some("0".into()); // 0, -0, 0.000e5
    }
    // value = 0.trimmed × 10^point
    let exp = parse_exponent(exponent);
    let point = exp + int.len() as i64 - (all.len() - digits.len()) as i64;
    if point > DECIMAL_EXPONENT_ABS_MAX {
        return None;
    }
    if point < -DECIMAL_EXPONENT_ABS_MAX {
        return Some("0".into());
    }
    // Normal doubles span 2.2e-308 to 1.8e308: 10^-307 <= value < 10^308.
    if trimmed.len() <= ROUND_TRIP_DIGITS_MAX && (-306..=308).contains(&point) {
        return Some(format_es(negative, trimmed, point));
    }
    let (q, e2) = nearest_double(trimmed, point - trimmed.len() as i64)?;
    if q == 0 {
        return Some("0".into());
    }
    let (digits, point) = shortest(q, e2);
    Some(format_es(negative, &digits, point))
}

/// A decimal exponent, saturated far beyond any double's range.
fn parse_exponent(text: &str) -> i64 {
    let (negative, digits) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..).unwrap_or_default()),
        Some(b'+') => (false, text.get(1..).unwrap_or_default()),
        _ => (false, text),
    };
    let mut e: i64 = 0;
    for b in digits.bytes() {
        e = (e * 10 + i64::from(b - b'0')).min(1_000_000);
    }
    if negative {
        -e
    } else {
        e
    }
}

/// ECMA-262 Number::toString placement of `digits` (no leading or
/// trailing zeros) for the value 0.digits × 10^n.
fn format_es(negative: bool, digits: &str, n: i64) -> String {
    let k = digits.len() as i64;
    let mut out = String::with_capacity(digits.len() + 8);
    if negative {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(digits.get(..n as usize).unwrap_or_default());
        out.push('.');
        out.push_str(digits.get(n as usize..).unwrap_or_default());
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(digits);
    } else {
        out.push_str(digits.get(..1).unwrap_or_default());
        if k > 1 {
            out.push('.');
            out.push_str(digits.get(1..).unwrap_or_default());
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).unsigned_abs().to_string());
    }
    out
}

// ------------------------------------------------------------------ big integers

/// An unsigned big integer, little-endian 32-bit limbs, no trailing zeros.
#[derive(Clone, PartialEq, Eq)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(n: u64) -> Big {
        let mut b = Big(vec![n as u32, (n >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    fn bits(&self) -> i64 {
        match self.0.last() {
            None => 0,
            Some(top) => 32 * self.0.len() as i64 - i64::from(top.leading_zeros()),
        }
    }

    fn mul_add_small(&mut self, m: u32, add: u32) {
        let mut carry = u64::from(add);
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry > 0 {
            self.0.push(carry as u32);
        }
        self.trim();
    }

    fn mul_pow10(&mut self, mut n: i64) {
        while n > 0 {
            let step = n.min(9);
            self.mul_add_small(10u32.pow(step as u32), 0);
            n -= step;
        }
    }

    fn shl(&mut self, bits: i64) {
        if bits <= 0 || self.is_zero() {
            return;
        }
        let (limbs, rest) = ((bits / 32) as usize, (bits % 32) as u32);
        if rest > 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = (*limb << rest) | carry;
                carry = *limb >> (32 - rest);
                *limb = v;
            }
            if carry > 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
    }

    fn cmp(&self, other: &Big) -> std::cmp::Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    /// `self -= other`; `other` must not be larger.
    fn sub(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for (i, limb) in self.0.iter_mut().enumerate() {
            let v = i64::from(*limb) - i64::from(other.0.get(i).copied().unwrap_or(0)) - borrow;
            *limb = v.rem_euclid(1 << 32) as u32;
            borrow = i64::from(v < 0);
        }
        self.trim();
    }

    /// `(self / d, self % d)` for a quotient below 2^64, by shift and
    /// subtract.
    fn div_rem_small_quotient(mut self, d: &Big) -> (u64, Big) {
        let mut q = 0u64;
        let top = (self.bits() - d.bits()).clamp(0, 63);
        for bit in (0..=top).rev() {
            let mut shifted = d.clone();
            shifted.shl(bit);
            if self.cmp(&shifted) != std::cmp::Ordering::Less {
                self.sub(&shifted);
                q |= 1 << bit;
            }
        }
        (q, self)
    }
}

/// `a × 2^a2` and `b × 10^b10`, both multiplied by one positive factor
/// that makes every exponent non-negative (each factor moves to the side
/// where its exponent is positive): integers in the same order, ratio and
/// relative distance as the two values.
fn scaled(mut a: Big, a2: i64, mut b: Big, b10: i64) -> (Big, Big) {
    if a2 >= 0 {
        a.shl(a2);
    } else {
        b.shl(-a2);
    }
    if b10 >= 0 {
        b.mul_pow10(b10);
    } else {
        a.mul_pow10(-b10);
    }
    (a, b)
}

/// `num × 10^exp10 × 2^exp2` as a fraction `(numerator, denominator)`.
fn fraction(num: Big, exp10: i64, exp2: i64) -> (Big, Big) {
    scaled(num, exp2, Big::from_u64(1), -exp10)
}

fn big_digits(digits: &str) -> Big {
    let mut n = Big(Vec::new());
    for b in digits.bytes() {
        n.mul_add_small(10, u32::from(b - b'0'));
    }
    n
}

/// The double nearest `digits × 10^exp10` (ties to even), as mantissa and
/// binary exponent `q × 2^e2`; `None` beyond the largest double.
fn nearest_double(digits: &str, exp10: i64) -> Option<(u64, i64)> {
    let (num, den) = fraction(big_digits(digits), exp10, 0);
    // floor(log2(value)): bits(num) - bits(den), or one less.
    let mut lg = num.bits() - den.bits();
    let (below, probe) = scaled(num.clone(), -lg, den.clone(), 0); // num vs den × 2^lg
    if below.cmp(&probe) == std::cmp::Ordering::Less {
        lg -= 1;
    }
    let e2 = (lg - 52).max(BINARY_EXPONENT_MIN);
    let (num, den) = scaled(num, -e2, den, 0); // value / 2^e2
    let (mut q, rem) = num.div_rem_small_quotient(&den);
    let mut twice = rem;
    twice.shl(1);
    match twice.cmp(&den) {
        std::cmp::Ordering::Greater => q += 1,
        std::cmp::Ordering::Equal if q & 1 == 1 => q += 1,
        _ => {}
    }
    let (q, e2) = if q == 1 << 53 {
        (q >> 1, e2 + 1)
    } else {
        (q, e2)
    };
    (e2 <= BINARY_EXPONENT_MAX).then_some((q, e2))
}

/// The shortest decimal digits that read back as the double `q × 2^e2`
/// (closest to it when several are that short, the even one on a tie), as
/// `(digits, n)` for 0.digits × 10^n.
fn shortest(q: u64, e2: i64) -> (String, i64) {
    // The double's rounding interval: halfway to each neighbour, ends
    // included when q is even (a tie reads back as the even mantissa).
    let lower_gap_halved = q == 1 << 52 && e2 > BINARY_EXPONENT_MIN;
    // Everything in units of 2^(e2-2): value 4q, ends 4q-2 (or 4q-1) and 4q+2.
    let value = 4 * q;
    let low = if lower_gap_halved {
        value - 1
    } else {
        value - 2
    };
    let high = value + 2;
    let inclusive = q & 1 == 0;
    // t = floor(log10(value)), found from the binary size and corrected.
    let unit = e2 - 2;
    let approx = ((64 - value.leading_zeros()) as i64 - 1 + unit) * 30103 / 100000;
    let mut t = approx - 1;
    while cmp_scaled(value, unit, &Big::from_u64(1), t + 1) != std::cmp::Ordering::Less {
        t += 1;
    }
    for p in 1..=17i64 {
        // Candidates c × 10^(t-p+1) with c = floor(value / 10^(t-p+1)) and c+1.
        let scale = t - p + 1;
        let (num, den) = fraction(Big::from_u64(value), -scale, unit);
        let (c, _) = num.div_rem_small_quotient(&den);
        let mut best: Option<(u64, Big)> = None;
        for cand in [c, c + 1] {
            let inside = |end: u64, below: bool| {
                let ord = cmp_scaled(end, unit, &Big::from_u64(cand), scale);
                match (below, ord) {
                    (_, std::cmp::Ordering::Equal) => inclusive,
                    (true, o) => o == std::cmp::Ordering::Less,
                    (false, o) => o == std::cmp::Ordering::Greater,
                }
            };
            if !(inside(low, true) && inside(high, false)) {
                continue;
            }
            let distance = distance(value, unit, cand, scale);
            let better = match &best {
                None => true,
                Some((b, d)) => match distance.cmp(d) {
                    std::cmp::Ordering::Less => true,
                    std::cmp::Ordering::Equal => cand % 2 == 0 && b % 2 == 1,
                    std::cmp::Ordering::Greater => false,
                },
            };
            if better {
                best = Some((cand, distance));
            }
        }
        if let Some((c, _)) = best {
            let text = c.to_string();
            let digits = text.trim_end_matches('0');
            // c has p digits, or p+1 when it rounded up to a power of ten.
            let n = scale + text.len() as i64;
            return (digits.to_owned(), n);
        }
    }
    // Unreachable for a finite double: 17 digits always read back.
    (q.to_string(), 0)
}

/// Compares `a × 2^a2` with `b × 10^b10`.
fn cmp_scaled(a: u64, a2: i64, b: &Big, b10: i64) -> std::cmp::Ordering {
    let (left, right) = scaled(Big::from_u64(a), a2, b.clone(), b10);
    left.cmp(&right)
}

/// `|v × 2^v2 − c × 10^c10|`, scaled by a positive factor that depends only
/// on the exponents (so distances of candidates with the same exponents
/// compare correctly).
fn distance(v: u64, v2: i64, c: u64, c10: i64) -> Big {
    let (mut left, mut right) = scaled(Big::from_u64(v), v2, Big::from_u64(c), c10);
    if left.cmp(&right) == std::cmp::Ordering::Less {
        std::mem::swap(&mut left, &mut right);
    }
    left.sub(&right);
    left
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The reference: the standard library's correctly rounded parse, then
    /// serde_json_canonicalizer (ryu-js, which prints as JavaScript does;
    /// Rust's own `{:e}` breaks ties between equally short, equally close
    /// digits upward, where ECMAScript picks the even one:
    /// 141000000000000.11 is ...12 in JavaScript, ...13 in Rust).
    fn reference(token: &str) -> Option<String> {
        let x: f64 = token.parse().unwrap();
        if !x.is_finite() {
            return None;
        }
        Some(serde_json_canonicalizer::to_string(&serde_json::json!(x)).unwrap())
    }

    #[test]
    fn hard_cases_read_as_javascript_reads_them() {
        for token in [
            "9007199254740993",
            "9007199254740995",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "4.9406564584124654e-324",
            "2.2250738585072011e-308",
            "2.2250738585072014e-308",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "0.30000000000000004",
            "0.1000000000000000055511151231257827",
            "123456789012345678901234567890",
            "1e23",
            "8.41e21",
            "5e-324",
            "1e-400",
            "1e400",
            "-0.0e-5",
            "100e-2",
            "0.000001",
            "1e-7",
            "123e-20",
            "1e21",
            "1e20",
            "295147905179352825856",
            "2.5e-8",
            "1.2345678901234567e-5",
            "7.2057594037927933e16",
            "141000000000000.11",
        ] {
            assert_eq!(canonical(token), reference(token), "{token}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn every_double_printed_long_reads_to_its_shortest_form(bits in any::<u64>(), extra in 0usize..25) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            let token = format!("{x:.extra$e}");
            prop_assert_eq!(canonical(&token), reference(&token), "{}", token);
            let shortest = format!("{x:e}");
            prop_assert_eq!(canonical(&shortest), reference(&shortest), "{}", shortest);
        }

        #[test]
        fn any_decimal_token_reads_as_javascript_reads_it(
            negative in any::<bool>(),
            int in "(0|[1-9][0-9]{0,25})",
            frac in prop::option::of("[0-9]{1,25}"),
            exp in prop::option::of(-340i32..340),
        ) {
            let mut token = format!("{}{int}", if negative { "-" } else { "" });
            if let Some(f) = frac {
                token.push('.');
                token.push_str(&f);
            }
            if let Some(e) = exp {
                token.push_str(&format!("e{e}"));
            }
            prop_assert_eq!(canonical(&token), reference(&token), "{}", token);
        }
    }
}
