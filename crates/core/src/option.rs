//! What a spec key is, described once: its name, aliases, value type, default, unit, one line
//! of help, and how a list of its values is written for a sweep.
//!
//! Workload option tables (`fsarena_workload::options`) and the target-kind table
//! (`fsarena_target::table`) are made of these, so that parsing, `fsarena help KIND`,
//! docs/workloads.md, docs/targets.md and the typed sweep values all read one definition.

use crate::units::{parse_size, parse_time};

/// The type of a key's value: how it is written, and what number it stands for in a sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `1`/`0` (also `true`/`false`, `yes`/`no`, `on`/`off`, and empty for true).
    Bool,
    /// A whole number.
    Count,
    /// Bytes, with fio's suffixes (`4k`, `1m`, `10g`: powers of 1024).
    Size,
    /// A duration: seconds when bare, or with `d h m s ms us ns`.
    Time,
    /// 0 to 100.
    Percent,
    /// One of a fixed set of words (or word forms such as `zipf:THETA`).
    Choice(&'static [&'static str]),
    /// One value for both directions or `READ,WRITE` (fio's `bs=4k,64k`).
    PerDirection(&'static ValueKind),
    /// fio's `bssplit`: `BS/PERCENT:BS/PERCENT...`.
    Split,
    /// Free text: a name, a path, mount or mkfs options.
    Text,
    /// A whole command line in another tool's syntax (`mdtest='-n 10 -u'`, `cmd='...'`).
    CommandLine,
    /// The path of a file fsarena reads (`replay=`, `loadfile=`): a regular file (never a
    /// FIFO, a device or a directory) of at most this many bytes, refused before anything is
    /// created. A key whose value fsarena reads must be of this kind, so that the bound and
    /// the check cannot be forgotten (`fsarena_workload::options` applies them).
    File(u64),
    /// The path of a directory fsarena copies (`assets=`): bounded in entries, depth and bytes
    /// by its workload, symbolic links never followed out of it, special files refused.
    Directory,
}

impl ValueKind {
    /// A short name for help tables: `bool`, `size`, `size[,size]`, ...
    pub fn name(&self) -> String {
        match self {
            ValueKind::Bool => "bool".into(),
            ValueKind::Count => "count".into(),
            ValueKind::Size => "size".into(),
            ValueKind::Time => "time".into(),
            ValueKind::Percent => "percent".into(),
            ValueKind::Choice(_) => "word".into(),
            ValueKind::PerDirection(inner) => format!("{0}[,{0}]", inner.name()),
            ValueKind::Split => "bssplit".into(),
            ValueKind::Text => "text".into(),
            ValueKind::CommandLine => "flags".into(),
            ValueKind::File(_) => "file".into(),
            ValueKind::Directory => "directory".into(),
        }
    }

    /// How a value is written, for help: `1 or 0`, `one of read, write`, ...
    pub fn syntax(&self) -> String {
        match self {
            ValueKind::Bool => "1 or 0".into(),
            ValueKind::Count => "a whole number".into(),
            ValueKind::Size => "bytes, or with a suffix k, m, g, t (powers of 1024)".into(),
            ValueKind::Time => "seconds, or with a suffix d, h, m, s, ms, us, ns".into(),
            ValueKind::Percent => "0 to 100".into(),
            ValueKind::Choice(words) => format!("one of {}", words.join(", ")),
            ValueKind::PerDirection(inner) => format!("{}; or READ,WRITE", inner.syntax()),
            ValueKind::Split => "BS/PERCENT:BS/PERCENT..., percentages adding up to 100".into(),
            ValueKind::Text => "text".into(),
            ValueKind::CommandLine => "a command line, quoted".into(),
            ValueKind::File(_) => "the path of a regular file (not a FIFO, a device or a directory), read before the run; each key says its largest size".into(),
            ValueKind::Directory => "the path of a directory of regular files, directories and symbolic links that stay inside it".into(),
        }
    }

    /// The separators a list of this kind's values may use in a spec when the key does not
    /// say otherwise: `|` alone where the value's own syntax holds commas, none for a whole
    /// command line, else `,` and `|`.
    pub const fn list(&self) -> ListSyntax {
        match self {
            ValueKind::PerDirection(_) | ValueKind::Split => ListSyntax::Bar,
            ValueKind::CommandLine | ValueKind::Directory => ListSyntax::None,
            _ => ListSyntax::CommaOrBar,
        }
    }

    /// `value` as a number in the kind's base unit, for the axes of sweep charts: bytes for
    /// sizes, nanoseconds for times, the number for counts and percentages; `None` for words,
    /// text, booleans and a per-direction pair (`4k,64k` is two numbers).
    pub fn number(&self, value: &str) -> Option<f64> {
        let value = value.trim();
        let finite = |n: f64| n.is_finite().then_some(n);
        match self {
            // A count may carry a size suffix where the key takes one (mdtest's `-n 2k`).
            ValueKind::Count => match value.parse::<f64>() {
                Ok(n) => finite(n),
                Err(_) => parse_size(value).ok().map(|n| n as f64),
            },
            ValueKind::Percent => value.parse::<f64>().ok().and_then(finite),
            ValueKind::Size => parse_size(value).ok().map(|n| n as f64),
            ValueKind::Time => parse_time(value, 1_000_000_000).ok().map(|t| t.0 as f64),
            ValueKind::PerDirection(inner) if !value.contains(',') => inner.number(value),
            _ => None,
        }
    }
}

/// How a list of values (a sweep) is written in a `KIND:key=...` spec. A TOML array is a
/// list whatever the key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListSyntax {
    /// `numjobs='1,4,16'` or `numjobs='1|4|16'`.
    CommaOrBar,
    /// Only `bs='4k|64k'`: the value's own syntax holds commas (`bs=4k,64k` is a read size
    /// and a write size).
    Bar,
    /// Not sweepable from a spec: a name, a whole command line.
    None,
}

impl ListSyntax {
    /// The separator characters.
    pub const fn separators(self) -> &'static [char] {
        match self {
            ListSyntax::CommaOrBar => &[',', '|'],
            ListSyntax::Bar => &['|'],
            ListSyntax::None => &[],
        }
    }
}

/// A key's default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefaultValue {
    /// This value, as a user would write it; a test sets every key to its default and checks
    /// that the result equals the `Default` of the options struct.
    Is(&'static str),
    /// Follows from other keys or from what runs, as said here (`size / nrfiles`).
    Derived(&'static str),
    /// Not set: the feature is off, or the key is required where said.
    Unset,
}

impl DefaultValue {
    /// For help tables: the value, the rule, or `-`.
    pub fn shown(&self) -> &'static str {
        match self {
            DefaultValue::Is(v) | DefaultValue::Derived(v) => v,
            DefaultValue::Unset => "-",
        }
    }
}

/// One key of a workload's options or of a target kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionDoc {
    /// The name in specs, TOML tables and job files.
    pub name: &'static str,
    /// Other names accepted for it (fio's).
    pub aliases: &'static [&'static str],
    /// The reference tool's one-letter flag for it (mdtest's `-n`, fs_mark's `-D`).
    pub flag: Option<char>,
    /// The value's type.
    pub value: ValueKind,
    /// The default.
    pub default: DefaultValue,
    /// The unit of the value, empty when it has none (`bytes`, `bytes/s`, `s`, `%`).
    pub unit: &'static str,
    /// One line of help, without the default (shown beside it).
    pub doc: &'static str,
    /// How a sweep of it is written.
    pub list: ListSyntax,
}

impl OptionDoc {
    /// A key with no alias, flag or unit, whose list syntax follows from its value type.
    pub const fn new(name: &'static str, value: ValueKind, default: DefaultValue, doc: &'static str) -> Self {
        let unit = match value {
            ValueKind::Size | ValueKind::PerDirection(ValueKind::Size) => "bytes",
            ValueKind::Time => "s",
            ValueKind::Percent => "%",
            _ => "",
        };
        Self { name, aliases: &[], flag: None, value, default, unit, doc, list: value.list() }
    }

    /// With these other names.
    pub const fn aka(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }

    /// With the reference tool's flag.
    pub const fn flag(mut self, flag: char) -> Self {
        self.flag = Some(flag);
        self
    }

    /// With this unit.
    pub const fn unit(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        self
    }

    /// With this list syntax instead of the value type's.
    pub const fn list(mut self, list: ListSyntax) -> Self {
        self.list = list;
        self
    }

    /// True when `key` is its name or an alias.
    pub fn is(&self, key: &str) -> bool {
        self.name == key || self.aliases.contains(&key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_become_numbers_in_base_units() {
        assert_eq!(ValueKind::Size.number("4k"), Some(4096.0));
        assert_eq!(ValueKind::Time.number("2m"), Some(120e9));
        assert_eq!(ValueKind::Time.number("10"), Some(10e9));
        assert_eq!(ValueKind::Count.number("16"), Some(16.0));
        assert_eq!(ValueKind::Count.number("2k"), Some(2048.0));
        assert_eq!(ValueKind::PerDirection(&ValueKind::Size).number("64k"), Some(65536.0));
        assert_eq!(ValueKind::PerDirection(&ValueKind::Size).number("4k,64k"), None);
        assert_eq!(ValueKind::Choice(&["read"]).number("read"), None);
        assert_eq!(ValueKind::Bool.number("1"), None);
        assert_eq!(ValueKind::Count.number("NaN"), None);
    }

    #[test]
    fn list_syntax_follows_the_value_unless_given() {
        let bs = OptionDoc::new("bs", ValueKind::PerDirection(&ValueKind::Size), DefaultValue::Is("4k"), "x");
        assert_eq!((bs.list.separators(), bs.unit), (&['|'][..], "bytes"));
        let n = OptionDoc::new("numjobs", ValueKind::Count, DefaultValue::Is("1"), "x");
        assert_eq!(n.list.separators(), &[',', '|']);
        assert_eq!(n.list(ListSyntax::None).list.separators(), &[] as &[char]);
        assert!(bs.aka(&["blocksize"]).is("blocksize"));
    }
}
