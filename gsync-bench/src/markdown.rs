//! Markdown tables and the number formats the report uses.

use crate::stats::Summary;

/// How a column's cells line up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Text.
    Left,
    /// Numbers.
    Right,
}

/// A Markdown table built row by row.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    headers: Vec<(String, Align)>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these columns.
    pub fn new(headers: &[(&str, Align)]) -> Table {
        Table { headers: headers.iter().map(|&(h, a)| (h.to_owned(), a)).collect(), rows: Vec::new() }
    }

    /// A table whose first column is text and the rest numbers.
    pub fn numeric(first: &str, rest: &[String]) -> Table {
        let mut headers = vec![(first.to_owned(), Align::Left)];
        headers.extend(rest.iter().map(|h| (h.clone(), Align::Right)));
        Table { headers, rows: Vec::new() }
    }

    /// Adds a row; missing cells are blank, extra cells are dropped.
    pub fn row(&mut self, cells: Vec<String>) {
        let mut cells = cells;
        cells.resize(self.headers.len(), String::new());
        self.rows.push(cells);
    }

    /// Whether no row was added.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The table as Markdown, one line per row, ending in a newline.
    pub fn render(&self) -> String {
        let escape = |cell: &str| cell.replace('|', "\\|").replace('\n', " ");
        let mut out = String::new();
        let headers: Vec<String> = self.headers.iter().map(|(h, _)| escape(h)).collect();
        out += &format!("| {} |\n", headers.join(" | "));
        let rules: Vec<&str> =
            self.headers.iter().map(|(_, a)| if *a == Align::Right { "---:" } else { "---" }).collect();
        out += &format!("|{}|\n", rules.join("|"));
        for row in &self.rows {
            let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
            out += &format!("| {} |\n", cells.join(" | "));
        }
        out
    }
}

/// A time in µs with precision that suits its size: 0.82, 12.3, 1234.
pub fn micros(us: f64) -> String {
    if us.abs() >= 1000.0 {
        format!("{us:.0}")
    } else if us.abs() >= 10.0 {
        format!("{us:.1}")
    } else {
        format!("{us:.2}")
    }
}

/// An optional time, "–" when missing.
pub fn maybe_micros(us: Option<f64>) -> String {
    us.map_or_else(|| "–".to_owned(), micros)
}

/// A median with its range: `12.3 (11.9–13.0)`.
pub fn with_range(summary: &Summary) -> String {
    format!("{} ({}–{})", micros(summary.median), micros(summary.min), micros(summary.max))
}

/// A ratio to two decimals, "–" when missing.
pub fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_owned(), |v| format!("{v:.2}"))
}

/// A fraction as a signed percentage: `+46.8%`.
pub fn signed_percent(fraction: f64) -> String {
    format!("{:+.1}%", fraction * 100.0)
}

/// A fraction as a percentage: `12%`.
pub fn percent(fraction: f64) -> String {
    format!("{:.0}%", fraction * 100.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_render_with_alignment_rules_and_escaped_cells() {
        let mut table = Table::new(&[("band", Align::Left), ("t_LBS", Align::Right)]);
        table.row(vec!["7–15".into(), "38.11".into()]);
        table.row(vec!["a|b".into()]);
        assert_eq!(table.render(), "| band | t_LBS |\n|---|---:|\n| 7–15 | 38.11 |\n| a\\|b |  |\n");
        assert!(!table.is_empty());
        let numeric = Table::numeric("blocks", &["lbs".to_owned()]);
        assert!(numeric.render().starts_with("| blocks | lbs |\n|---|---:|\n"));
        assert!(numeric.is_empty());
    }

    #[test]
    fn numbers_are_formatted_by_size() {
        assert_eq!(micros(0.8234), "0.82");
        assert_eq!(micros(12.345), "12.3");
        assert_eq!(micros(1234.4), "1234");
        assert_eq!(maybe_micros(None), "–");
        assert_eq!(ratio(Some(1.2849)), "1.28");
        assert_eq!(signed_percent(0.468), "+46.8%");
        assert_eq!(signed_percent(-0.05), "-5.0%");
        assert_eq!(percent(0.123), "12%");
        let s = Summary::of(&[11.9, 12.3, 13.04]).expect("values");
        assert_eq!(with_range(&s), "12.3 (11.9–13.0)");
    }
}
