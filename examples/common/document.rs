//! The output of the examples: prose and tables, written as a markdown
//! report (the default), CSV or JSON, to stdout or a file.
//!
//! Sections of a report add facts, lines and tables to one [`Document`];
//! a new section is a function that takes `&mut Document`. Markdown to
//! stdout appears as it is measured; the machine-readable formats are
//! written at [`Document::finish`], and their prose goes to stderr so that
//! stdout holds nothing else.
//!
//! CSV: every table's rows in one table, a `table` column first and the
//! union of the tables' columns after it (empty where a table lacks one).
//! JSON: `{"facts": {...}, "tables": {"<table>": [{row}, ...], ...}}`.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Csv,
    Json,
}

/// One value of a fact or a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    /// A measured number and the decimals markdown shows of it (CSV and
    /// JSON show three more, which is below any timing's noise).
    Number(f64, usize),
    Count(u64),
    Missing,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        Cell::Text(text.into())
    }

    fn markdown(&self) -> String {
        match self {
            Cell::Text(text) => text.replace('|', "\\|"),
            Cell::Number(x, decimals) if x.is_finite() => format!("{x:.decimals$}"),
            Cell::Count(n) => n.to_string(),
            Cell::Number(..) | Cell::Missing => "-".to_string(),
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Text(text) if text.contains([',', '"', '\n', '\r']) => {
                format!("\"{}\"", text.replace('"', "\"\""))
            }
            Cell::Text(text) => text.clone(),
            Cell::Number(x, decimals) if x.is_finite() => machine_number(*x, *decimals),
            Cell::Count(n) => n.to_string(),
            Cell::Number(..) | Cell::Missing => String::new(),
        }
    }

    fn json(&self) -> String {
        match self {
            Cell::Text(text) => json_string(text),
            Cell::Number(x, decimals) if x.is_finite() => machine_number(*x, *decimals),
            Cell::Count(n) => n.to_string(),
            Cell::Number(..) | Cell::Missing => "null".to_string(),
        }
    }
}

/// `x` for CSV and JSON: three decimals more than markdown shows, no
/// trailing zeros (valid as a JSON number).
fn machine_number(x: f64, decimals: usize) -> String {
    let decimals = decimals + 3;
    let text = format!("{x:.decimals$}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" {
        "0".to_string()
    } else {
        text.to_string()
    }
}

fn json_string(text: &str) -> String {
    let mut quoted = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => quoted += "\\\"",
            '\\' => quoted += "\\\\",
            '\n' => quoted += "\\n",
            c if u32::from(c) < 0x20 => {
                let _ = write!(quoted, "\\u{:04x}", u32::from(c));
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// Writes `text` to stdout now. A reader that went away (`| head`) ends
/// the program quietly instead of in a panic.
fn write_stdout(text: &str) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("error: cannot write to stdout: {e}");
        }
        std::process::exit(1);
    }
}

/// A column: its markdown heading and its CSV/JSON key.
pub type Column = (&'static str, &'static str);

pub struct Table {
    pub name: &'static str,
    pub columns: &'static [Column],
    pub rows: Vec<Vec<Cell>>,
    /// Markdown leaves the first `grouped` cells of a row blank when they
    /// repeat the row above (a filter's own columns over its backends).
    grouped: usize,
}

pub struct Document {
    format: Format,
    out: Option<String>,
    /// Markdown not yet written (all of it when going to a file).
    markdown: String,
    facts: Vec<(&'static str, Cell)>,
    tables: Vec<Table>,
}

impl Document {
    pub fn new(format: Format, out: Option<String>) -> Document {
        Document {
            format,
            out,
            markdown: String::new(),
            facts: Vec::new(),
            tables: Vec::new(),
        }
    }

    pub fn format(&self) -> Format {
        self.format
    }

    /// Markdown goes to stdout as it comes.
    fn live(&self) -> bool {
        self.format == Format::Markdown && self.out.is_none()
    }

    /// A line of prose: part of a markdown report, else on stderr.
    pub fn line(&mut self, text: &str) {
        if self.format != Format::Markdown {
            if !text.is_empty() {
                eprintln!("{text}");
            }
            return;
        }
        self.markdown += text;
        self.markdown.push('\n');
        if self.live() {
            write_stdout(&self.markdown);
            self.markdown.clear();
        }
    }

    /// A fact about the run, for JSON's `facts` (say it in prose too).
    pub fn fact(&mut self, key: &'static str, value: Cell) {
        self.facts.push((key, value));
    }

    /// Progress while measuring, for the formats that print nothing
    /// before the end.
    pub fn progress(&self, text: &str) {
        if !self.live() {
            eprintln!("{text}");
        }
    }

    /// Starts a table; [`Document::row`] adds to the newest one.
    pub fn table(&mut self, name: &'static str, columns: &'static [Column], grouped: usize) {
        self.tables.push(Table {
            name,
            columns,
            rows: Vec::new(),
            grouped,
        });
        if self.format != Format::Markdown {
            return;
        }
        let titles: Vec<&str> = columns.iter().map(|&(title, _)| title).collect();
        self.line(&format!("| {} |", titles.join(" | ")));
        self.line(&format!("|{}", "---|".repeat(columns.len())));
    }

    pub fn row(&mut self, cells: Vec<Cell>) {
        let table = self.tables.last_mut().expect("a table was started");
        assert_eq!(cells.len(), table.columns.len(), "one cell per column");
        let repeats = table
            .rows
            .last()
            .is_some_and(|above| above[..table.grouped] == cells[..table.grouped]);
        if self.format != Format::Markdown {
            table.rows.push(cells);
            return;
        }
        let mut line = String::from("|");
        for (i, cell) in cells.iter().enumerate() {
            if repeats && i < table.grouped {
                line += " |";
            } else {
                line += &format!(" {} |", cell.markdown());
            }
        }
        table.rows.push(cells);
        self.line(&line);
    }

    /// Writes what is left: the CSV or JSON, or the markdown report when
    /// it goes to a file.
    pub fn finish(self) -> Result<(), String> {
        let text = match self.format {
            Format::Markdown => self.markdown.clone(),
            Format::Csv => self.csv(),
            Format::Json => self.json(),
        };
        match &self.out {
            Some(path) => {
                std::fs::write(path, text).map_err(|e| format!("cannot write {path}: {e}"))?;
                eprintln!("wrote {path}");
            }
            None => {
                write_stdout(&text);
            }
        }
        Ok(())
    }

    fn csv(&self) -> String {
        let mut keys: Vec<&str> = Vec::new();
        for table in &self.tables {
            for &(_, key) in table.columns {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
        let mut text = format!("table,{}\n", keys.join(","));
        for table in &self.tables {
            for row in &table.rows {
                text += table.name;
                for key in &keys {
                    text.push(',');
                    if let Some(i) = table.columns.iter().position(|&(_, k)| k == *key) {
                        text += &row[i].csv();
                    }
                }
                text.push('\n');
            }
        }
        text
    }

    fn json(&self) -> String {
        let facts: Vec<String> = self
            .facts
            .iter()
            .map(|(key, value)| format!("    {}: {}", json_string(key), value.json()))
            .collect();
        let tables: Vec<String> = self
            .tables
            .iter()
            .map(|table| {
                let rows: Vec<String> = table
                    .rows
                    .iter()
                    .map(|row| {
                        let fields: Vec<String> = table
                            .columns
                            .iter()
                            .zip(row)
                            .map(|(&(_, key), cell)| {
                                format!("{}: {}", json_string(key), cell.json())
                            })
                            .collect();
                        format!("      {{{}}}", fields.join(", "))
                    })
                    .collect();
                format!(
                    "    {}: [\n{}\n    ]",
                    json_string(table.name),
                    rows.join(",\n")
                )
            })
            .collect();
        format!(
            "{{\n  \"facts\": {{\n{}\n  }},\n  \"tables\": {{\n{}\n  }}\n}}\n",
            facts.join(",\n"),
            tables.join(",\n")
        )
    }
}
