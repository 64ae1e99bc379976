//! Escaping of user-provided text (target labels, workload parameters, environment values) for
//! HTML, SVG and Markdown. Everything a user or a machine gave goes through here before it is
//! written into markup, so a label such as `<script>alert(1)</script>` shows as text.

/// `text` safe inside HTML or XML (SVG) text and inside a double- or single-quoted attribute.
pub(crate) fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline are not allowed in XML 1.0.
            c if c.is_control() && c != '\t' && c != '\n' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// `text` shown literally in Markdown, also inside a table cell or an image's alt text: markup
/// characters are backslash-escaped, `<`, `>` and `&` become entities (so no raw HTML passes),
/// and line breaks become spaces (a table row is one line).
pub(crate) fn markdown(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c if c.is_control() && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_labels_become_text() {
        assert_eq!(html("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(html(r#"a" onload="x' & y"#), "a&quot; onload=&quot;x&#39; &amp; y");
        assert_eq!(html("bell\u{7}"), "bell\u{fffd}");
        assert_eq!(html("ext4 · µs"), "ext4 · µs");
    }

    #[test]
    fn markdown_keeps_tables_and_text_intact() {
        assert_eq!(markdown("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;");
        assert_eq!(markdown("a|b *c* [d](e) `f`"), r"a\|b \*c\* \[d\](e) \`f\`");
        assert_eq!(markdown("two\nlines"), "two lines");
        assert_eq!(markdown("read_bw"), r"read\_bw");
    }
}
