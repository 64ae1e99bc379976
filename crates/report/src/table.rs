//! One table, built once from the model and rendered to each surface: HTML (escaped, numbers
//! right-aligned, a marked cell coloured), Markdown (escaped, aligned by its separator row, a
//! marked cell bold) and text (inert user text, aligned by comfy-table). A surface never writes
//! a table's cells itself, so every surface shows the same cells.

use fsarena_core::printable;
use std::fmt::Write as _;

/// A column: its heading, how its cells align, and what they are.
#[derive(Debug, Clone)]
pub struct Column {
    /// The heading.
    pub title: String,
    /// Right-aligned: numbers (HTML class `num`, Markdown `---:`).
    pub numeric: bool,
    /// Left-aligned as said (Markdown `:---`) rather than as the surface has it (`---`).
    pub left: bool,
    /// What its cells are: values, or the name of their row.
    pub role: Role,
}

impl Column {
    /// A column of values: numbers (`numeric`, right-aligned) or words (left-aligned).
    pub fn new(title: &str, numeric: bool) -> Self {
        Self { title: title.to_string(), numeric, left: !numeric, role: Role::Value }
    }
}

/// What the cells of a column are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Values.
    Value,
    /// The row's name, in the row's first cell (HTML `<td class="metric">`).
    Name,
    /// The row's heading (HTML `<th>`): the key of a table of facts.
    Heading,
}

/// What a cell says beyond its text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// The significantly better side of a comparison.
    Better,
    /// The significantly worse side of a comparison.
    Worse,
    /// The best of a row, significantly (HTML class `best`, Markdown in bold).
    Best,
    /// The worst of a row: significantly, or failed cases (HTML class `worst`, Markdown in
    /// italics).
    Worst,
    /// A value that differs from the first column's (HTML class `differs`).
    Differs,
}

/// One cell: its text (user text included, escaped by each renderer) and its mark.
#[derive(Debug, Clone)]
pub struct Cell {
    /// What it says.
    pub text: String,
    /// Better or worse, if it is a verdict that is one; best, worst, differs.
    pub mark: Option<Mark>,
    /// Nothing to say here (the target did not run it): a dash, `–` in HTML and Markdown,
    /// `-` in text.
    pub blank: bool,
    /// More about it, shown on hover in HTML (each repetition's value), nowhere else.
    pub title: Option<String>,
    /// Short words after its text (`↑`, `n.s.`), each with what it means.
    pub notes: Vec<Note>,
}

/// A short word after a cell's text and what it means: HTML shows the meaning on hover.
#[derive(Debug, Clone)]
pub struct Note {
    /// The word: `↑`, `n.s.`.
    pub text: String,
    /// What it means: `higher is better`.
    pub meaning: String,
    /// An aside (`n.s.`: in parentheses, HTML class `ns`) rather than a sign (`↑`).
    pub aside: bool,
}

impl Cell {
    /// A cell saying `text`, marked.
    pub fn marked(text: String, mark: Option<Mark>) -> Self {
        Self { text, mark, blank: false, title: None, notes: Vec::new() }
    }

    /// A cell with nothing to say.
    pub fn blank() -> Self {
        Self { blank: true, ..Self::marked(String::new(), None) }
    }

    /// Its notes as plain text: ` ↑ (n.s.)`.
    fn notes_text(&self, escape: fn(&str) -> String) -> String {
        let mut out = String::new();
        for n in &self.notes {
            let _ = if n.aside { write!(out, " ({})", escape(&n.text)) } else { write!(out, " {}", escape(&n.text)) };
        }
        out
    }

    /// Its text on a surface whose dash for a blank cell is `dash`.
    fn text_or<'a>(&'a self, dash: &'a str) -> &'a str {
        if self.blank {
            dash
        } else {
            &self.text
        }
    }
}

impl From<String> for Cell {
    fn from(text: String) -> Self {
        Self::marked(text, None)
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
    /// A table of values with these columns: `(title, numeric)`.
    pub fn new(columns: &[(&str, bool)]) -> Self {
        Self::with(columns.iter().map(|(t, n)| Column::new(t, *n)).collect())
    }

    /// A table with these columns.
    pub fn with(columns: Vec<Column>) -> Self {
        Self { columns, rows: Vec::new() }
    }

    /// Adds a row.
    pub fn push(&mut self, row: Vec<Cell>) {
        self.rows.push(row);
    }

    /// As HTML, in a scrolling wrapper; `class` is the table's class (none when empty).
    pub fn html(&self, class: &str) -> String {
        let num = |c: &Column| if c.numeric { " class=\"num\"" } else { "" };
        let mut out = String::from("<div class=\"table-wrap\">");
        match class {
            "" => out.push_str("<table>\n<thead><tr>"),
            _ => {
                let _ = write!(out, "<table class=\"{class}\">\n<thead><tr>");
            }
        }
        for c in &self.columns {
            let _ = write!(out, "<th{}>{}</th>", num(c), crate::escape::html(&c.title));
        }
        out.push_str("</tr></thead><tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (c, cell) in self.columns.iter().zip(row) {
                let n = if c.numeric { "num " } else { "" };
                let class = match (cell.mark, c.role) {
                    (Some(Mark::Better), _) => " class=\"better\"".to_string(),
                    (Some(Mark::Worse), _) => " class=\"worse\"".to_string(),
                    (Some(Mark::Best), _) => format!(" class=\"{n}best\""),
                    (Some(Mark::Worst), _) => format!(" class=\"{n}worst\""),
                    (Some(Mark::Differs), _) => format!(" class=\"{n}differs\""),
                    (None, Role::Name) => " class=\"metric\"".to_string(),
                    (None, _) => num(c).to_string(),
                };
                let tag = if c.role == Role::Heading { "th" } else { "td" };
                let title = cell.title.as_ref().map(|t| format!(" title=\"{}\"", crate::escape::html(t)));
                let _ = write!(
                    out,
                    "<{tag}{class}{}>{}",
                    title.unwrap_or_default(),
                    crate::escape::html(cell.text_or("–"))
                );
                for n in &cell.notes {
                    let (meaning, text) = (crate::escape::html(&n.meaning), crate::escape::html(&n.text));
                    let _ = match n.aside {
                        true => write!(out, "<span class=\"ns\" title=\"{meaning}\">{text}</span>"),
                        false => write!(out, "<small title=\"{meaning}\">{text}</small>"),
                    };
                }
                let _ = write!(out, "</{tag}>");
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
            out.push_str(match (c.numeric, c.left) {
                (true, _) => "---:|",
                (false, true) => ":---|",
                (false, false) => "---|",
            });
        }
        out.push('\n');
        for row in &self.rows {
            out.push('|');
            for cell in row {
                let text = crate::escape::markdown(cell.text_or("–")) + &cell.notes_text(crate::escape::markdown);
                match cell.mark {
                    Some(Mark::Better | Mark::Worse | Mark::Best) => {
                        let _ = write!(out, " **{text}** |");
                    }
                    Some(Mark::Worst) => {
                        let _ = write!(out, " _{text}_ |");
                    }
                    Some(Mark::Differs) | None => {
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
        table.set_header(self.columns.iter().map(|c| printable(&c.title).into_owned()));
        for row in &self.rows {
            table
                .add_row(row.iter().map(|c| printable(c.text_or("-")).into_owned() + &c.notes_text(|t| t.to_string())));
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
            Cell::marked("worse".into(), Some(Mark::Worse)),
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

    #[test]
    fn names_headings_notes_and_blanks_render_each_surfaces_way() {
        let mut name = Column::new("metric", false);
        name.role = Role::Name;
        let mut t = Table::with(vec![name, Column::new("ext4", true), Column::new("xfs", true)]);
        let mut metric = Cell::from("read_bw".to_string());
        metric.notes.push(Note { text: "↑".into(), meaning: "higher is better".into(), aside: false });
        metric.notes.push(Note { text: "n.s.".into(), meaning: "<not significant>".into(), aside: true });
        let best = Cell { title: Some("n=3: 1, 2, 3".into()), ..Cell::marked("2 ± 1".into(), Some(Mark::Best)) };
        t.push(vec![metric, best, Cell::blank()]);
        let html = t.html("compare");
        assert!(
            html.contains("<tr><td class=\"metric\">read_bw<small title=\"higher is better\">↑</small><span class=\"ns\" title=\"&lt;not significant&gt;\">n.s.</span></td><td class=\"num best\" title=\"n=3: 1, 2, 3\">2 ± 1</td><td class=\"num\">–</td></tr>"),
            "{html}"
        );
        assert_eq!(t.markdown().lines().nth(2), Some("| read\\_bw ↑ (n.s.) | **2 ± 1** | – |"));
        assert!(t.text().contains("| read_bw ↑ (n.s.) | 2 ± 1 |   - |"), "{}", t.text());

        let mut key = Column::new("", false);
        (key.role, key.left) = (Role::Heading, false);
        let mut facts = Table::with(vec![key, Column { left: false, ..Column::new("value", false) }]);
        facts.push(vec!["kernel".to_string().into(), Cell::marked("6.2".into(), Some(Mark::Differs))]);
        let html = facts.html("");
        assert!(html.starts_with("<div class=\"table-wrap\"><table>\n<thead><tr><th></th><th>value</th>"), "{html}");
        assert!(html.contains("<tr><th>kernel</th><td class=\"differs\">6.2</td></tr>"), "{html}");
        assert_eq!(facts.markdown(), "|  | value |\n|---|---|\n| kernel | 6.2 |\n");
    }
}
