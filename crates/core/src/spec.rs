//! `KIND[:key=value,...]` spec strings, shared by targets and workloads.
//!
//! A value holding commas is quoted with single quotes: `fuse:cmd='a,b {mnt}'`.

use crate::InputError;

/// A parsed spec: its kind and its key/value pairs in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spec {
    /// The part before the first `:`.
    pub kind: String,
    /// `key=value` pairs; a bare `key` gets the value `"1"` (as fio's flag options do).
    pub params: Vec<(String, String)>,
}

impl Spec {
    /// Parses `KIND[:key=value,...]`.
    pub fn parse(text: &str) -> Result<Self, InputError> {
        let text = text.trim();
        let (kind, rest) = match text.split_once(':') {
            Some((k, r)) => (k, Some(r)),
            None => (text, None),
        };
        if kind.is_empty() || !kind.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(InputError::new(format!("'{text}' is not a spec: expected KIND[:key=value,...]")));
        }
        let mut params = Vec::new();
        if let Some(rest) = rest {
            for item in split_unquoted(rest, ',')? {
                if item.trim().is_empty() {
                    continue;
                }
                let (key, value) = match item.split_once('=') {
                    Some((k, v)) => (k.trim(), unquote(v.trim())),
                    None => (item.trim(), "1".to_string()),
                };
                if key.is_empty() {
                    return Err(InputError::new(format!("'{item}' in '{text}' has no key")));
                }
                params.push((key.to_string(), value));
            }
        }
        Ok(Self { kind: kind.to_string(), params })
    }

    /// The value of `key`, if given (the last one wins, as in fio).
    pub fn get(&self, key: &str) -> Option<&str> {
        self.params.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

impl std::fmt::Display for Spec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.kind)?;
        for (i, (k, v)) in self.params.iter().enumerate() {
            let sep = if i == 0 { ':' } else { ',' };
            if v.contains(',') {
                write!(f, "{sep}{k}='{v}'")?;
            } else {
                write!(f, "{sep}{k}={v}")?;
            }
        }
        Ok(())
    }
}

/// Splits on `sep` outside single quotes.
fn split_unquoted(text: &str, sep: char) -> Result<Vec<String>, InputError> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                current.push(c);
            }
            c if c == sep && !quoted => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    if quoted {
        return Err(InputError::new(format!("unbalanced single quote in '{text}'")));
    }
    parts.push(current);
    Ok(parts)
}

fn unquote(value: &str) -> String {
    value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')).unwrap_or(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kind_alone() {
        let s = Spec::parse("tmpfs").unwrap();
        assert_eq!(s.kind, "tmpfs");
        assert!(s.params.is_empty());
    }

    #[test]
    fn params_in_order_with_bare_flags() {
        let s = Spec::parse("io:rw=randread,bs=4k,time_based").unwrap();
        assert_eq!(s.kind, "io");
        assert_eq!(s.get("rw"), Some("randread"));
        assert_eq!(s.get("time_based"), Some("1"));
        assert_eq!(s.params.len(), 3);
    }

    #[test]
    fn quoted_values_keep_commas_and_colons() {
        let s = Spec::parse("fuse:cmd='juicefs mount a,b {mnt}',label=jfs").unwrap();
        assert_eq!(s.get("cmd"), Some("juicefs mount a,b {mnt}"));
        assert_eq!(s.get("label"), Some("jfs"));
        let s = Spec::parse("io:bssplit=4k/10:64k/90").unwrap();
        assert_eq!(s.get("bssplit"), Some("4k/10:64k/90"));
    }

    #[test]
    fn display_round_trips() {
        let text = "fuse:cmd='a,b',label=x";
        assert_eq!(Spec::parse(text).unwrap().to_string(), text);
    }

    #[test]
    fn bad_specs_are_refused() {
        assert!(Spec::parse("").is_err());
        assert!(Spec::parse(":rw=read").is_err());
        assert!(Spec::parse("io:cmd='open").is_err());
        assert!(Spec::parse("io:=3").is_err());
    }
}
