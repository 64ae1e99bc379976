//! User text on its way to a terminal or a log line: labels, job names, paths and values come
//! from specs and job files, and a terminal interprets escape sequences. Everything fsarena
//! echoes goes through [`printable`], so a label such as `"\x1b]0;pwned\x07"` or one with a
//! newline shows as inert text and never rewrites the screen or forges a second output line.

use std::borrow::Cow;

/// `text` as one word for `sh`: in single quotes, each `'` written as `'\''`. Nothing inside
/// single quotes is special to the shell, so a path holding spaces, `;`, `$(...)` or quotes
/// stays one literal argument. Every placeholder fsarena substitutes into a shell command
/// (`fuse:cmd=`'s `{mnt}`, `exec:cmd=`'s `{mnt}` and `{assets}`) goes through this.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` with every control character (C0, DEL, C1), every bidirectional override and
/// isolate (which reorder what a reader sees) and U+FEFF written as a visible escape:
/// `\n`, `\t`, `\r`, `\x1b`, `\u{202e}`. Text without them is returned as it is.
pub fn printable(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) && (c as u32) < 0x100 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if needs_escape(c) => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `" did you mean 'numjobs'?"` when one of `candidates` is close to the unknown `word` (a
/// typo), else nothing. Closeness is Jaro–Winkler similarity above 0.8, the measure clap
/// uses for its own suggestions (through the same `strsim` crate).
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    let best = candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0));
    match best {
        Some((_, c)) if c != word => format!(" did you mean '{c}'?"),
        _ => String::new(),
    }
}

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

/// `850ms`, `4.2s`, `42s`, `4m20s`, `1h05m`: rounded, so a value just under a unit's edge
/// reads as the next (9.97 s is `10s`, not `10.0s` or `9s`).
pub fn human_duration(d: std::time::Duration) -> String {
    let seconds = d.as_secs_f64();
    if seconds < 0.9995 {
        return format!("{}ms", (seconds * 1000.0).round() as u64);
    }
    if seconds < 9.95 {
        return format!("{seconds:.1}s");
    }
    let secs = seconds.round() as u64;
    if secs < 60 {
        format!("{secs}s")
    } else if secs < 3600 {
        format!("{}m{:02}s", secs / 60, secs % 60)
    } else {
        format!("{}h{:02}m", secs / 3600, secs % 3600 / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::{did_you_mean, printable};

    #[test]
    fn a_close_word_is_suggested_and_a_far_one_is_not() {
        let keys = ["numjobs", "nrfiles", "iodepth", "size", "bs"];
        assert_eq!(did_you_mean("numjob", keys), " did you mean 'numjobs'?");
        assert_eq!(did_you_mean("iodpeth", keys), " did you mean 'iodepth'?");
        assert_eq!(did_you_mean("colour", keys), "");
        assert_eq!(did_you_mean("", keys), "");
    }

    #[test]
    fn plain_text_is_borrowed_and_controls_are_escaped() {
        assert!(matches!(printable("ext4 · 4k randread"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(printable("a\nb\tc\r"), "a\\nb\\tc\\r");
        assert_eq!(printable("\x1b]0;pwned\x07"), "\\x1b]0;pwned\\x07");
        assert_eq!(printable("\u{9b}31m"), "\\x9b31m");
        assert_eq!(printable("abc\u{202e}gpj.exe"), "abc\\u{202e}gpj.exe");
        assert_eq!(printable("\u{feff}[global]"), "\\u{feff}[global]");
        assert_eq!(printable("\x7f"), "\\x7f");
    }
}
