//! User text on its way to a terminal or a log line: labels, job names, paths and values come
//! from specs and job files, and a terminal interprets escape sequences. Everything fsarena
//! echoes goes through [`printable`], so a label such as `"\x1b]0;pwned\x07"` or one with a
//! newline shows as inert text and never rewrites the screen or forges a second output line.

use std::borrow::Cow;

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

fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(c, '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{feff}')
}

#[cfg(test)]
mod tests {
    use super::printable;

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
