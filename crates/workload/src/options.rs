//! The option-table machinery every workload kind shares: a table row is a key's description
//! ([`OptionDoc`]: name, aliases, type, default, unit, help, list syntax) plus the setter that
//! writes its value into the kind's options struct. Lookup, the unknown-key message with its
//! suggestion, and the value parsers (`boolean`, `size`, ...) are here once, for io, meta and
//! tree alike.

use fsarena_core::option::{DefaultValue, OptionDoc, ValueKind};
use fsarena_core::units::parse_size;
use fsarena_core::InputError;
use std::path::Path;

/// Writes one key's value into the options `T`; the error says what is wrong with the value
/// and what is accepted (the caller adds `key=value:`).
pub type Setter<T> = fn(&mut T, &str) -> Result<(), String>;

/// One row of a kind's option table.
#[derive(Debug)]
pub struct OptionDef<T: 'static> {
    /// What the key is: name, aliases, type, default, unit, help.
    pub doc: OptionDoc,
    set: Setter<T>,
}

impl<T> OptionDef<T> {
    /// A row: its description and its setter.
    pub const fn new(doc: OptionDoc, set: Setter<T>) -> Self {
        Self { doc, set }
    }

    /// With these other names.
    pub const fn aka(mut self, aliases: &'static [&'static str]) -> Self {
        self.doc = self.doc.aka(aliases);
        self
    }

    /// With the reference tool's flag.
    pub const fn flag(mut self, flag: char) -> Self {
        self.doc = self.doc.flag(flag);
        self
    }

    /// With this unit.
    pub const fn unit(mut self, unit: &'static str) -> Self {
        self.doc = self.doc.unit(unit);
        self
    }

    /// With this list syntax instead of the value type's.
    pub const fn list(mut self, list: fsarena_core::option::ListSyntax) -> Self {
        self.doc = self.doc.list(list);
        self
    }

    /// Sets this key to `value` in `options`; the error is the setter's own, for callers that
    /// frame it themselves (an mdtest flag: `-n ten: ...`).
    pub fn write(&self, options: &mut T, value: &str) -> Result<(), String> {
        (self.set)(options, value)
    }

    /// Sets this key to `value` in `options`; the error names `key` (as given) and the value.
    /// A file key's file is checked here (a regular file within its size), so that a FIFO or
    /// /dev/zero is refused before anything is created whatever the workload does with it.
    pub fn apply(&self, options: &mut T, key: &str, value: &str) -> Result<(), InputError> {
        if let ValueKind::File(cap) = self.doc.value {
            check_file(key, Path::new(value.trim()), cap)?;
        }
        (self.set)(options, value).map_err(|m| match self.doc.value {
            // A whole command line's errors quote it and name the flag already.
            ValueKind::CommandLine => InputError::new(m),
            _ => InputError::new(crate::plain::value_error(key, value, &m)),
        })
    }
}

// Rows read like descriptions (`def.name`, `def.doc`), and callers that only list names need
// not know a row is more than its description.
impl<T> std::ops::Deref for OptionDef<T> {
    type Target = OptionDoc;
    fn deref(&self) -> &OptionDoc {
        &self.doc
    }
}

/// A row of `$options`: `opt!(IoOptions, "rw", Choice(RW), Is("read"), "help", |o, v| o.rw = parse(v)?)`;
/// the body is a statement, `?` takes a `Result<_, String>`. The calling crate depends on
/// fsarena-core, as every family does.
#[macro_export]
macro_rules! opt {
    ($options:ty, $name:literal, $value:expr, $default:expr, $doc:literal, |$o:ident, $v:ident| $body:expr) => {
        $crate::options::OptionDef::<$options>::new(
            fsarena_core::option::OptionDoc::new($name, $value, $default, $doc),
            |$o: &mut $options, $v: &str| -> Result<(), String> {
                $body;
                #[allow(unreachable_code)]
                Ok(())
            },
        )
    };
}
pub use crate::opt;

/// The row for `key` (a name or an alias).
pub fn find<T>(table: &'static [OptionDef<T>], key: &str) -> Option<&'static OptionDef<T>> {
    table.iter().find(|d| d.is(key))
}

/// Sets `key` to `value` in `options` by `table`; an unknown key is answered with a
/// suggestion (did you mean 'numjobs'?) and every accepted name, a bad value with the key,
/// the value and what is accepted.
pub fn set<T>(
    kind: &str,
    table: &'static [OptionDef<T>],
    options: &mut T,
    key: &str,
    value: &str,
) -> Result<(), InputError> {
    let def = find(table, key).ok_or_else(|| {
        InputError::new(format!(
            "unknown {kind} option '{}':{} accepted options are {}",
            crate::plain::cut(key),
            fsarena_core::did_you_mean(key, table.iter().map(|d| d.name)),
            table.iter().map(|d| d.name).collect::<Vec<_>>().join(", ")
        ))
    })?;
    def.apply(options, key, value)
}

/// How a file key's file is named in errors: `replay= file`.
fn file_words(key: &str) -> String {
    format!("{}= file", crate::plain::cut(key))
}

/// Checks that `path`, the value of the file key `key`, is a regular file of at most `cap`
/// bytes, reading nothing of it.
fn check_file(key: &str, path: &Path, cap: u64) -> Result<(), InputError> {
    fsarena_target::beneath::check_input_file(path, &file_words(key), cap).map_err(|e| InputError::new(e.0))
}

/// Reads the file `path` given to the file key `key` of `table` (a [`ValueKind::File`] row,
/// whose size limit applies): every file a key names is read here, never opened by path
/// elsewhere, so none can block on a FIFO, grow without bound or be quoted in an error.
/// Invalid UTF-8 is an error naming the line, not the bytes.
pub fn read_file<T>(table: &'static [OptionDef<T>], key: &str, path: &Path) -> Result<String, InputError> {
    let cap = match find(table, key).map(|d| d.value) {
        Some(ValueKind::File(cap)) => cap,
        _ => return Err(InputError::new(format!("{key}= does not name a file in its table (a bug)"))),
    };
    fsarena_target::beneath::read_input_text(path, &file_words(key), cap).map_err(|e| InputError::new(e.0))
}

/// The descriptions of a table's rows, for the registry and help.
pub fn docs<T>(table: &'static [OptionDef<T>]) -> Vec<&'static OptionDoc> {
    table.iter().map(|d| &d.doc).collect()
}

/// Checks a table against its options struct: names and aliases unique, every row with help,
/// every default a valid value of its type, and setting every key to its default changes
/// nothing — so the struct's `Default` and the table say the same. `resolve` turns the
/// options into what a run uses (identity where the struct holds the final values). For
/// tests; the error names the first row that disagrees.
pub fn check_table<T: Default, R: PartialEq + std::fmt::Debug>(
    table: &'static [OptionDef<T>],
    resolve: impl Fn(&T) -> R,
) -> Result<(), String> {
    let mut names: Vec<&str> =
        table.iter().flat_map(|d| std::iter::once(d.name).chain(d.aliases.iter().copied())).collect();
    let n = names.len();
    names.sort_unstable();
    names.dedup();
    if names.len() != n {
        return Err("an option name or alias is defined twice".into());
    }
    let expected = resolve(&T::default());
    for def in table {
        if def.doc.doc.is_empty() || def.doc.doc.contains("(default") {
            return Err(format!("{}: help must be one line without the default (shown from the table)", def.name));
        }
        if let ValueKind::Choice(words) = def.value {
            if words.is_empty() {
                return Err(format!("{}: a choice without words", def.name));
            }
        }
        let DefaultValue::Is(default) = def.default else { continue };
        let mut options = T::default();
        (def.set)(&mut options, default).map_err(|m| format!("{}: default '{default}' is refused: {m}", def.name))?;
        let got = resolve(&options);
        if got != expected {
            return Err(format!(
                "{}={default} (the table's default) gives {got:?}, but Default gives {expected:?}",
                def.name
            ));
        }
        if !default_fits(&def.value, default) {
            return Err(format!("{}: default '{default}' is not a {}", def.name, def.value.name()));
        }
    }
    Ok(())
}

/// True when `value` is written as `kind` says (for the table check).
fn default_fits(kind: &ValueKind, value: &str) -> bool {
    match kind {
        ValueKind::Bool => boolean(value).is_ok(),
        ValueKind::Count | ValueKind::Size | ValueKind::Time | ValueKind::Percent => kind.number(value).is_some(),
        ValueKind::Choice(words) => words.contains(&value),
        ValueKind::PerDirection(inner) => value.split(',').all(|v| default_fits(inner, v)),
        ValueKind::Split | ValueKind::Text | ValueKind::CommandLine | ValueKind::File(_) | ValueKind::Directory => true,
    }
}

/// `1`/`0`, `true`/`false`, `yes`/`no`, `on`/`off`; empty (a bare fio key) is true.
pub fn boolean(v: &str) -> Result<bool, String> {
    match v.trim() {
        "" | "1" | "true" | "yes" | "on" => Ok(true),
        "0" | "false" | "no" | "off" => Ok(false),
        _ => Err(format!("'{v}' is not a boolean: expected 1 or 0")),
    }
}

/// A size in bytes, with fio's suffixes.
pub fn size(v: &str) -> Result<u64, String> {
    parse_size(v).map_err(|e| e.message)
}

/// A size larger than 0.
pub fn nonzero_size(v: &str) -> Result<u64, String> {
    match size(v)? {
        0 => Err(format!("'{v}' must be larger than 0")),
        n => Ok(n),
    }
}

/// A whole number, no suffix.
pub fn whole(v: &str) -> Result<u64, String> {
    v.trim().parse::<u64>().map_err(|_| format!("'{v}' is not a whole number"))
}

/// A whole number that fits 32 bits.
pub fn whole32(v: &str) -> Result<u32, String> {
    whole(v)?.try_into().map_err(|_| format!("'{v}' is too large"))
}

/// A whole number of 32 bits, read as a `u32` directly (a larger one is "not a whole number",
/// as meta has always said).
pub fn small(v: &str) -> Result<u32, String> {
    v.trim().parse::<u32>().map_err(|_| format!("'{v}' is not a whole number"))
}

/// A whole number of at least 1.
pub fn positive(v: &str) -> Result<u32, String> {
    match v.trim().parse::<u32>() {
        Ok(0) => Err(format!("'{v}' must be at least 1")),
        Ok(n) => Ok(n),
        Err(_) => Err(format!("'{v}' is not a whole number")),
    }
}

/// A count that may carry a size suffix (mdtest's `-n 2k`).
pub fn count(v: &str) -> Result<u64, String> {
    size(v)
}

/// 0 to 100.
pub fn percent(v: &str) -> Result<u32, String> {
    match whole(v)? {
        n @ 0..=100 => Ok(n as u32),
        _ => Err(format!("'{v}' is not a percentage: expected 0 to 100")),
    }
}

/// For the parsers of files a key names (which may be any file): feeds `parse` every line of
/// `lines` with each of its words replaced by a secret, or with the secret glued to it, and
/// checks that no error quotes the secret; the number of errors seen. For the families' tests.
///
/// # Panics
///
/// When an error quotes the secret.
#[doc(hidden)]
pub fn assert_never_quotes(lines: &[&str], parse: impl Fn(&str) -> Result<(), String>) -> usize {
    const SECRET: &str = "S3kr1t";
    let mut errors = 0;
    for line in lines {
        let separators = |c: char| c.is_whitespace() || ",=(;:\"\\".contains(c);
        for w in line.split(separators).filter(|w| !w.is_empty()) {
            for replaced in [line.replacen(w, SECRET, 1), line.replacen(w, &format!("{w}{SECRET}"), 1)] {
                if let Err(e) = parse(&replaced) {
                    assert!(!e.contains(SECRET), "{replaced:?}: {e}");
                    errors += 1;
                }
            }
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_parsers_accept_what_they_say() {
        assert_eq!(boolean(""), Ok(true));
        assert_eq!(boolean(" off "), Ok(false));
        assert!(boolean("maybe").unwrap_err().contains("expected 1 or 0"));
        assert_eq!(size("4k"), Ok(4096));
        assert!(nonzero_size("0").unwrap_err().contains("larger than 0"));
        assert!(percent("101").unwrap_err().contains("0 to 100"));
        assert!(positive("0").unwrap_err().contains("at least 1"));
        assert_eq!(count("2k"), Ok(2048));
        assert!(whole32("5000000000").unwrap_err().contains("too large"));
    }
}
