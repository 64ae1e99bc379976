//! Sizes and durations: newtypes, fio-compatible parsing and human formatting.

use crate::InputError;
use serde::{Deserialize, Serialize};

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// A duration in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Nanos(pub u64);

impl Nanos {
    /// Whole milliseconds, truncated as fio does for `runtime`.
    pub fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    /// Seconds as a float.
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// From a std duration, saturating.
    pub fn from_duration(d: std::time::Duration) -> Self {
        Self(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

/// Parses a size the way fio does with its default `kb_base=1024`: a decimal (or `0x` hex)
/// integer with an optional case-insensitive suffix `b`, `k`/`kb`, `m`/`mb`, `g`/`gb`,
/// `t`/`tb`, `p`/`pb` (powers of 1024), or `ki`/`kib`, `mi`/`mib`, ... which fio, for
/// historical reasons, takes as powers of 1000 under `kb_base=1024`.
pub fn parse_size(text: &str) -> Result<u64, InputError> {
    let t = text.trim();
    let bad = || {
        InputError::new(format!(
            "'{text}' is not a size: expected a number with an optional suffix k, m, g, t, p (base 2, e.g. 4k, 1m, 10g)"
        ))
    };
    let (digits, suffix) = if let Some(hex) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        let end = hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len());
        (u64::from_str_radix(&hex[..end], 16).map_err(|_| bad())?, &hex[end..])
    } else {
        let end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        if end == 0 {
            return Err(bad());
        }
        (t[..end].parse::<u64>().map_err(|_| bad())?, &t[end..])
    };
    let suffix = suffix.trim().to_ascii_lowercase();
    let (power, base) = match suffix.as_str() {
        "" | "b" => (0, 1024),
        "k" | "kb" => (1, 1024),
        "m" | "mb" => (2, 1024),
        "g" | "gb" => (3, 1024),
        "t" | "tb" => (4, 1024),
        "p" | "pb" => (5, 1024),
        "ki" | "kib" => (1, 1000),
        "mi" | "mib" => (2, 1000),
        "gi" | "gib" => (3, 1000),
        "ti" | "tib" => (4, 1000),
        "pi" | "pib" => (5, 1000),
        _ => return Err(bad()),
    };
    let mult = (0..power).try_fold(1u64, |acc, _| acc.checked_mul(base)).ok_or_else(bad)?;
    digits
        .checked_mul(mult)
        .ok_or_else(|| InputError::new(format!("'{text}' is too large a size: at most 2^64-1 bytes")))
}

/// Parses a duration the way fio does: a number with an optional suffix `d`, `h`, `m`, `s`,
/// `ms`/`msec`, `us`/`usec`, `ns`/`nsec`; a bare number is in `default_unit` nanoseconds
/// (seconds for `runtime` and `ramp_time`).
pub fn parse_time(text: &str, default_unit: u64) -> Result<Nanos, InputError> {
    let t = text.trim();
    let bad = || {
        InputError::new(format!(
            "'{text}' is not a duration: expected a number with an optional suffix d, h, m, s, ms, us, ns (e.g. 10s, 500ms)"
        ))
    };
    let end = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    if end == 0 {
        return Err(bad());
    }
    let number: f64 = t[..end].parse().map_err(|_| bad())?;
    let unit: u64 = match t[end..].trim().to_ascii_lowercase().as_str() {
        "" => default_unit,
        "d" => 86_400_000_000_000,
        "h" => 3_600_000_000_000,
        "m" | "min" => 60_000_000_000,
        "s" | "sec" => 1_000_000_000,
        "ms" | "msec" => 1_000_000,
        "us" | "usec" => 1_000,
        "ns" | "nsec" => 1,
        _ => return Err(bad()),
    };
    let ns = number * unit as f64;
    if !ns.is_finite() || ns >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(Nanos(ns.round() as u64))
}

/// A limit in words: `1 MiB`, `64 KiB`, `100 bytes` (for "at most ..." in help and errors).
pub fn limit_text(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 30 && b % (1 << 30) == 0 => format!("{} GiB", b >> 30),
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

/// `bytes` in IEC units with one decimal where useful: `4096` -> `4.0KiB`, `1536000` -> `1.5MiB`.
pub fn format_iec(bytes: f64) -> String {
    scaled(bytes, 1024.0, &["B", "KiB", "MiB", "GiB", "TiB", "PiB"])
}

/// `bytes` in SI units: `4096` -> `4.1kB`.
pub fn format_si(bytes: f64) -> String {
    scaled(bytes, 1000.0, &["B", "kB", "MB", "GB", "TB", "PB"])
}

/// A plain count with SI prefixes as fio prints IOPS: `254000` -> `254k`.
pub fn format_count(value: f64) -> String {
    if value < 10_000.0 {
        return format!("{}", value.round() as u64);
    }
    let s = scaled(value, 1000.0, &["", "k", "M", "G", "T"]);
    s.trim_end_matches(".0").to_string().replace(".0k", "k").replace(".0M", "M")
}

fn scaled(mut value: f64, base: f64, units: &[&str]) -> String {
    let mut i = 0;
    while value >= base && i + 1 < units.len() {
        value /= base;
        i += 1;
    }
    if i == 0 {
        format!("{}{}", value.round() as u64, units[0])
    } else if value >= 100.0 {
        format!("{:.0}{}", value, units[i])
    } else {
        format!("{:.1}{}", value, units[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_fio() {
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("128k").unwrap(), 131_072);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("1mb").unwrap(), 1 << 20);
        assert_eq!(parse_size("1MB").unwrap(), 1 << 20);
        assert_eq!(parse_size("10g").unwrap(), 10 << 30);
        assert_eq!(parse_size("15g").unwrap(), 15 << 30);
        assert_eq!(parse_size("2t").unwrap(), 2 << 40);
        assert_eq!(parse_size("1kib").unwrap(), 1000);
        assert_eq!(parse_size("1mi").unwrap(), 1_000_000);
        assert_eq!(parse_size("0x1000").unwrap(), 4096);
        assert_eq!(parse_size("512b").unwrap(), 512);
    }

    #[test]
    fn bad_sizes_say_what_is_accepted() {
        for bad in ["", "k", "4q", "4kk", "-1", "1.5g", "99999999999p"] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.message.contains(bad), "{bad}: {e}");
        }
    }

    #[test]
    fn times_default_to_the_given_unit() {
        assert_eq!(parse_time("10", 1_000_000_000).unwrap(), Nanos(10_000_000_000));
        assert_eq!(parse_time("10s", 1).unwrap(), Nanos(10_000_000_000));
        assert_eq!(parse_time("500ms", 1).unwrap(), Nanos(500_000_000));
        assert_eq!(parse_time("2m", 1).unwrap(), Nanos(120_000_000_000));
        assert_eq!(parse_time("1.5s", 1).unwrap(), Nanos(1_500_000_000));
        assert_eq!(parse_time("3us", 1).unwrap(), Nanos(3_000));
        assert!(parse_time("fast", 1).is_err());
        assert!(parse_time("10x", 1).is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_iec(4096.0), "4.0KiB");
        assert_eq!(format_iec(512.0), "512B");
        assert_eq!(format_si(4096.0), "4.1kB");
        assert_eq!(format_iec(1_073_741_824.0 * 1.5), "1.5GiB");
        assert_eq!(format_count(254_000.0), "254k");
        assert_eq!(format_count(9_999.0), "9999");
        assert_eq!(format_count(25_400.0), "25.4k");
    }
}
