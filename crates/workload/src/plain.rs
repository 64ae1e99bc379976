//! Names that become file or directory names inside a target, and values echoed in errors.
//!
//! Every name a workload derives from its input (a job `name=`, a fio `[section]`,
//! `filename=`, a tree's size list) is joined to the target's root. A name with `/` or `..`
//! would put files outside the target (`io:name=/some/dir/victim` once overwrote and deleted
//! `/some/dir/victim.0.0`), so only plain names are accepted: one path component, nothing the
//! kernel or a terminal would read as structure.

/// Longest name accepted, in bytes: leaves room under NAME_MAX (255) for the `.JOB.FILE`
/// suffixes fsarena appends.
pub const MAX_NAME_BYTES: usize = 200;

/// Longest part of a value quoted in an error message, in characters.
pub const MAX_QUOTED_CHARS: usize = 64;

/// What a plain name is, for error messages.
pub const PLAIN_NAME_RULE: &str =
    "a plain name of 1 to 200 bytes, not '.' or '..', with no '/', NUL or control characters (it names a file inside the target)";

/// Checks that `value` is a plain name; the error says which rule it breaks.
pub fn check_plain_name(value: &str) -> Result<(), String> {
    let why = if value.is_empty() {
        "it is empty"
    } else if value == "." || value == ".." {
        "it names a directory, not a file"
    } else if value.contains('/') {
        "it holds '/'"
    } else if value.contains('\0') {
        "it holds a NUL byte"
    } else if value.chars().any(char::is_control) {
        "it holds a control character"
    } else if value.len() > MAX_NAME_BYTES {
        "it is longer than 200 bytes"
    } else {
        return Ok(());
    };
    Err(format!("'{}' is not a plain name ({why}): expected {PLAIN_NAME_RULE}", cut(value)))
}

/// `value` cut to [`MAX_QUOTED_CHARS`] characters (with `…` when cut), so that an error never
/// quotes a megabyte of job file.
pub fn cut(value: &str) -> std::borrow::Cow<'_, str> {
    match value.char_indices().nth(MAX_QUOTED_CHARS) {
        Some((end, _)) => format!("{}…", &value[..end]).into(),
        None => value.into(),
    }
}

/// An option setter's error `message` about `key=value`, with every quote of a long value cut.
pub fn value_error(key: &str, value: &str, message: &str) -> String {
    let short = cut(value);
    let message = if short.len() < value.len() && !value.is_empty() {
        message.replace(value, &short)
    } else {
        message.to_string()
    };
    format!("{}={short}: {message}", cut(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_pass() {
        for good in ["io", "seq-read 1", "job.x", "ü", &"a".repeat(200)] {
            assert!(check_plain_name(good).is_ok(), "{good}");
        }
        let bad = [
            ("", "empty"),
            (".", "directory"),
            ("..", "directory"),
            ("/some/dir/victim", "'/'"),
            ("../victim", "'/'"),
            ("a\0b", "NUL"),
            ("a\nb", "control"),
            ("\x1b[31m", "control"),
        ];
        for (name, why) in bad {
            let e = check_plain_name(name).unwrap_err();
            assert!(e.contains(why) && e.contains("plain name"), "{name:?}: {e}");
        }
        let long = "a".repeat(201);
        let e = check_plain_name(&long).unwrap_err();
        assert!(e.contains("longer than 200") && e.len() < 300, "{e}");
    }

    #[test]
    fn long_values_are_cut_in_errors() {
        let v = "x".repeat(1000);
        let e = value_error("bs", &v, &format!("'{v}' is not a size"));
        assert!(e.len() < 200, "{e}");
        assert!(e.starts_with("bs=xxxx") && e.contains("…"), "{e}");
        assert_eq!(value_error("bs", "4q", "'4q' is not a size"), "bs=4q: '4q' is not a size");
    }
}
