//! One table, built once from the model and rendered to each surface: HTML (escaped, numbers
//! right-aligned, a marked cell coloured), Markdown (escaped, aligned by its separator row, a
//! marked cell bold) and text (inert user text, aligned by comfy-table). A surface never writes
//! a table's cells itself, so every surface shows the same cells.

use fsarena_core::printable;
use std::fmt::Write as _;

/// A column: its heading, and whether it holds numbers (right-aligned).
#[derive(Debug, Clone)]
pub struct Column {
    /// The heading.
    pub title: String,
    /// Right-aligned.
    pub numeric: bool,
}

/// What a cell says beyond its text: the better or the worse side of a comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Significantly better.
    Better,
    /// Significantly worse.
    Worse,
}

/// One cell: its text (user text included, escaped by each renderer) and its mark.
#[derive(Debug, Clone)]
pub struct Cell {
    /// What it says.
    pub text: String,
    /// Better or worse, if it is a verdict that is one.
    pub mark: Option<Mark>,
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Self { text, mark: None }
    }
}

/// A table: its columns and rows of cells, one per column.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The rows.
    pub rows: Vec<Vec<Cell>>,
}

impl Table {
    /// A table with these columns: `(title, numeric)`.
    pub fn new(columns: &[(&str, bool)]) -> Self {
        let columns = columns.iter().map(|(t, n)| Column { title: (*t).to_string(), numeric: *n }).collect();
        Self { columns, rows: Vec::new() }
    }

    /// Adds a row.
    pub fn push(&mut self, row: Vec<Cell>) {
        self.rows.push(row);
    }

    /// As HTML, in a scrolling wrapper; `class` is the table's class.
    pub fn html(&self, class: &str) -> String {
        let num = |c: &Column| if c.numeric { " class=\"num\"" } else { "" };
        let mut out = format!("<div class=\"table-wrap\"><table class=\"{class}\">\n<thead><tr>");
        for c in &self.columns {
            let _ = write!(out, "<th{}>{}</th>", num(c), crate::escape::html(&c.title));
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, cell) in self.columns.iter().zip(row) {
                let class = match cell.mark {
                    Some(Mark::Better) => " class=\"better\"",
                    Some(Mark::Worse) => " class=\"worse\"",
                    None => num(c),
                };
                let _ = write!(out, "<td{class}>{}</td>", crate::escape::html(&cell.text));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody></table></div>\n");
        out
    }

    /// As a Markdown table.
    pub fn markdown(&self) -> String {
        let mut out = String::from("|");
        for c in &self.columns {
            let _ = write!(out, " {} |", crate::escape::markdown(&c.title));
        }
        out.push_str("\n|");
        for c in &self.columns {
            out.push_str(if c.numeric { "---:|" } else { ":---|" });
        }
        out.push('\n');
        for row in &self.rows {
            out.push('|');
            for cell in row {
                let text = crate::escape::markdown(&cell.text);
                match cell.mark {
                    Some(_) => {
                        let _ = write!(out, " **{text}** |");
                    }
                    None => {
                        let _ = write!(out, " {text} |");
                    }
                }
            }
            out.push('\n');
        }
        out
    }

    /// As text for a terminal or a pipe: Markdown-style ASCII, user text shown inert.
    pub fn text(&self) -> String {
        use comfy_table::{presets, CellAlignment};
        let mut table = comfy_table::Table::new();
        table.load_preset(presets::ASCII_MARKDOWN).force_no_tty();
        table.set_header(self.columns.iter().map(|c| c.title.clone()));
        for row in &self.rows {
            table.add_row(row.iter().map(|c| printable(&c.text).into_owned()));
        }
        for (i, c) in self.columns.iter().enumerate() {
            if let (true, Some(col)) = (c.numeric, table.column_mut(i)) {
                col.set_cell_alignment(CellAlignment::Right);
            }
        }
        format!("{table}\n")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn sample() -> Table {
        let mut t = Table::new(&[("target", false), ("A", true), ("verdict", false)]);
        t.push(vec![
            "<ext4>|x".to_string().into(),
            "1.5 GiB/s".to_string().into(),
            Cell { text: "worse".into(), mark: Some(Mark::Worse) },
        ]);
        t
    }

    #[test]
    fn one_table_says_the_same_cells_on_every_surface_each_escaped_its_way() {
        let t = sample();
        let html = t.html("ab");
        assert!(
            html.contains("<td>&lt;ext4&gt;|x</td><td class=\"num\">1.5 GiB/s</td><td class=\"worse\">worse</td>"),
            "{html}"
        );
        let md = t.markdown();
        assert!(md.starts_with("| target | A | verdict |\n|:---|---:|:---|\n"), "{md}");
        assert!(md.contains("| **worse** |") && !md.contains("<ext4>|x"), "{md}");
        let text = t.text();
        assert!(text.contains("<ext4>|x") && text.contains("1.5 GiB/s") && text.contains("worse"), "{text}");
    }
}
