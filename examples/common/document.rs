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
//! union of the tables' columns after it (empty where a table lacks one),
//! then the facts as rows of the table `facts` (columns `fact` and
//! `value`). JSON: `{"facts": {...}, "tables": {"<table>": [{row}, ...],
//! ...}}`. A time measured over several runs ([`Spread`]) is its median
//! in markdown with the range after it, `4.3 (4.1-4.6)`, and three fields
//! in CSV and JSON: `<key>` (the median), `<key>_min` and `<key>_max`.
#![allow(dead_code)]

use std::fmt::Write as _;
use std::io::Write as _;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Markdown,
    Csv,
    Json,
}

/// A quantity measured in several runs: their median and range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    /// The median (the upper one of an even count), least and greatest of
    /// `values`; NaN for none.
    pub fn of(mut values: Vec<f64>) -> Spread {
        values.sort_by(f64::total_cmp);
        match (values.first(), values.last()) {
            (Some(&min), Some(&max)) => Spread {
                median: values[values.len() / 2],
                min,
                max,
            },
            _ => Spread {
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            },
        }
    }

    /// Each of the three scaled by `factor`.
    pub fn scaled(self, factor: f64) -> Spread {
        Spread {
            median: self.median * factor,
            min: self.min * factor,
            max: self.max * factor,
        }
    }
}

/// One value of a fact or a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Text(String),
    /// A measured number and the decimals markdown shows of it (CSV and
    /// JSON show three more, which is below any timing's noise).
    Number(f64, usize),
    /// A number measured in several runs, with the decimals as `Number`.
    Spread(Spread, usize),
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
            Cell::Spread(s, decimals) if s.median.is_finite() => format!(
                "{:.decimals$} ({:.decimals$}-{:.decimals$})",
                s.median, s.min, s.max
            ),
            Cell::Count(n) => n.to_string(),
            Cell::Number(..) | Cell::Spread(..) | Cell::Missing => "-".to_string(),
        }
    }

    /// The fields this cell gives CSV and JSON under `key`: itself, or a
    /// spread's median under `key` and its range under `key_min` and
    /// `key_max`.
    fn fields(&self, key: &str) -> Vec<(String, Cell)> {
        match self {
            Cell::Spread(s, decimals) => vec![
                (key.to_string(), Cell::Number(s.median, *decimals)),
                (format!("{key}_min"), Cell::Number(s.min, *decimals)),
                (format!("{key}_max"), Cell::Number(s.max, *decimals)),
            ],
            other => vec![(key.to_string(), other.clone())],
        }
    }

    fn csv(&self) -> String {
        match self {
            Cell::Text(text) if text.contains([',', '"', '\n', '\r']) => {
                format!("\"{}\"", text.replace('"', "\"\""))
            }
            Cell::Text(text) => text.clone(),
            Cell::Number(x, decimals) if x.is_finite() => machine_number(*x, *decimals),
            Cell::Spread(s, decimals) => Cell::Number(s.median, *decimals).csv(),
            Cell::Count(n) => n.to_string(),
            Cell::Number(..) | Cell::Missing => String::new(),
        }
    }

    fn json(&self) -> String {
        match self {
            Cell::Text(text) => json_string(text),
            Cell::Number(x, decimals) if x.is_finite() => machine_number(*x, *decimals),
            Cell::Spread(s, decimals) => Cell::Number(s.median, *decimals).json(),
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
        // The union of the tables' keys, in order; a column that holds a
        // spread in some row adds its `_min` and `_max` keys after it.
        let mut keys: Vec<String> = Vec::new();
        let mut add = |key: String| {
            if !keys.contains(&key) {
                keys.push(key);
            }
        };
        for table in &self.tables {
            for (i, &(_, key)) in table.columns.iter().enumerate() {
                match table
                    .rows
                    .iter()
                    .find(|row| matches!(row[i], Cell::Spread(..)))
                {
                    Some(row) => row[i].fields(key).into_iter().for_each(|(k, _)| add(k)),
                    None => add(key.to_string()),
                }
            }
        }
        if !self.facts.is_empty() {
            add("fact".to_string());
            add("value".to_string());
        }
        let mut text = format!("table,{}\n", keys.join(","));
        let mut write_row = |table: &str, fields: Vec<(String, Cell)>| {
            text += table;
            for key in &keys {
                text.push(',');
                if let Some((_, cell)) = fields.iter().find(|(k, _)| k == key) {
                    text += &cell.csv();
                }
            }
            text.push('\n');
        };
        for table in &self.tables {
            for row in &table.rows {
                let fields = table
                    .columns
                    .iter()
                    .zip(row)
                    .flat_map(|(&(_, key), cell)| cell.fields(key))
                    .collect();
                write_row(table.name, fields);
            }
        }
        for (fact, value) in &self.facts {
            write_row(
                "facts",
                vec![
                    ("fact".to_string(), Cell::text(*fact)),
                    ("value".to_string(), value.clone()),
                ],
            );
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
                            .flat_map(|(&(_, key), cell)| cell.fields(key))
                            .map(|(key, cell)| format!("{}: {}", json_string(&key), cell.json()))
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
