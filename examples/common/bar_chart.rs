//! A horizontal grouped bar chart written as plain SVG (no dependency):
//! groups of labelled rows, one bar per series in each row with its value
//! at the end (and, where given, a whisker from its least to its greatest
//! run), a value axis with grid lines, a legend and a title.
#![allow(dead_code)]

use std::fmt::Write as _;

pub struct Series {
    pub name: String,
    /// Any SVG colour.
    pub colour: &'static str,
}

pub struct Row {
    pub label: String,
    /// One value per series; a value that is not finite draws no bar.
    pub values: Vec<f64>,
    /// One range per series (least, greatest), drawn as a whisker over
    /// the bar; empty, or `None` for a series, draws none.
    pub ranges: Vec<Option<(f64, f64)>>,
}

pub struct Group {
    pub label: String,
    pub rows: Vec<Row>,
}

pub struct BarChart {
    pub title: String,
    pub subtitle: String,
    pub axis_label: String,
    pub series: Vec<Series>,
    pub groups: Vec<Group>,
    /// Decimals of the value written after each bar.
    pub decimals: usize,
}

/// Colours told apart with any colour vision (Okabe and Ito), for series
/// in turn.
pub const PALETTE: [&str; 7] = [
    "#e69f00", "#0072b2", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#f0e442",
];

const WIDTH: f64 = 980.0;
/// Room for the row labels left of the bars.
const PLOT_LEFT: f64 = 210.0;
/// Room for the value written after the longest bar.
const PLOT_RIGHT: f64 = WIDTH - 70.0;
const PLOT_TOP: f64 = 100.0;
const BAR: f64 = 10.0;
const BAR_GAP: f64 = 2.0;
const ROW_GAP: f64 = 8.0;
const GROUP_HEADING: f64 = 24.0;
const GROUP_GAP: f64 = 8.0;

impl BarChart {
    pub fn svg(&self) -> String {
        let max = self
            .groups
            .iter()
            .flat_map(|g| &g.rows)
            .flat_map(|r| {
                r.values
                    .iter()
                    .chain(r.ranges.iter().flatten().map(|(_, hi)| hi))
            })
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max);
        let decimals_shown = self.decimals;
        let (step, decimals) = tick_step(max / 6.0);
        let axis_max = if max > 0.0 {
            (max / step).ceil() * step
        } else {
            step
        };
        let x_of = |value: f64| PLOT_LEFT + value / axis_max * (PLOT_RIGHT - PLOT_LEFT);

        let bars = self.series.len() as f64;
        let row_height = bars * BAR + (bars - 1.0).max(0.0) * BAR_GAP + ROW_GAP;
        let plot_bottom = PLOT_TOP
            + self
                .groups
                .iter()
                .map(|g| GROUP_HEADING + g.rows.len() as f64 * row_height + GROUP_GAP)
                .sum::<f64>();
        let height = plot_bottom + 60.0;

        let mut svg = String::new();
        let _ = writeln!(
            svg,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="Helvetica, Arial, sans-serif">"#
        );
        let _ = writeln!(svg, "<title>{}</title>", escape(&self.title));
        let _ = writeln!(
            svg,
            r##"<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>"##
        );
        let _ = writeln!(
            svg,
            r##"<text x="16" y="30" font-size="18" font-weight="bold" fill="#111">{}</text>"##,
            escape(&self.title)
        );
        let _ = writeln!(
            svg,
            r##"<text x="16" y="52" font-size="13" fill="#444">{}</text>"##,
            escape(&self.subtitle)
        );

        // Legend.
        let mut x = 16.0;
        for series in &self.series {
            let _ = writeln!(
                svg,
                r##"<rect x="{x}" y="68" width="14" height="14" fill="{}"/><text x="{}" y="80" font-size="13" fill="#111">{}</text>"##,
                series.colour,
                x + 20.0,
                escape(&series.name)
            );
            // About 7 px per character at 13 px.
            x += 20.0 + series.name.chars().count() as f64 * 7.0 + 24.0;
        }

        // Grid lines and tick labels.
        let ticks = (axis_max / step).round() as usize;
        for i in 0..=ticks {
            let value = i as f64 * step;
            let tx = x_of(value);
            let colour = if i == 0 { "#888" } else { "#e2e2e2" };
            let _ = writeln!(
                svg,
                r##"<line x1="{tx:.1}" y1="{PLOT_TOP}" x2="{tx:.1}" y2="{plot_bottom}" stroke="{colour}"/><text x="{tx:.1}" y="{}" font-size="12" text-anchor="middle" fill="#333">{value:.decimals$}</text>"##,
                plot_bottom + 18.0
            );
        }
        let _ = writeln!(
            svg,
            r##"<line x1="{PLOT_LEFT}" y1="{plot_bottom}" x2="{PLOT_RIGHT}" y2="{plot_bottom}" stroke="#888"/>"##
        );
        let _ = writeln!(
            svg,
            r##"<text x="{:.1}" y="{}" font-size="13" text-anchor="middle" fill="#111">{}</text>"##,
            (PLOT_LEFT + PLOT_RIGHT) / 2.0,
            plot_bottom + 42.0,
            escape(&self.axis_label)
        );

        // Groups, rows, bars.
        let mut y = PLOT_TOP;
        for (g, group) in self.groups.iter().enumerate() {
            let group_height = GROUP_HEADING + group.rows.len() as f64 * row_height;
            if g % 2 == 1 {
                // A light band tells neighbouring groups apart.
                let _ = writeln!(
                    svg,
                    r##"<rect x="8" y="{y}" width="{}" height="{group_height}" fill="#000" fill-opacity="0.035"/>"##,
                    WIDTH - 16.0
                );
            }
            let _ = writeln!(
                svg,
                r##"<text x="16" y="{}" font-size="14" font-weight="bold" fill="#111">{}</text>"##,
                y + 17.0,
                escape(&group.label)
            );
            y += GROUP_HEADING;
            for row in &group.rows {
                let bars_height = row_height - ROW_GAP;
                let _ = writeln!(
                    svg,
                    r##"<text x="{}" y="{:.1}" font-size="12" text-anchor="end" fill="#222">{}</text>"##,
                    PLOT_LEFT - 8.0,
                    y + bars_height / 2.0 + 4.0,
                    escape(&row.label)
                );
                for (i, (series, &value)) in self.series.iter().zip(&row.values).enumerate() {
                    if !value.is_finite() {
                        continue;
                    }
                    let top = y + i as f64 * (BAR + BAR_GAP);
                    let end = x_of(value.max(0.0));
                    let range = row
                        .ranges
                        .get(i)
                        .copied()
                        .flatten()
                        .filter(|(lo, hi)| lo.is_finite() && hi.is_finite());
                    let range_text = range.map_or_else(String::new, |(lo, hi)| {
                        format!(" (runs {lo:.2} to {hi:.2})")
                    });
                    let _ = writeln!(
                        svg,
                        r##"<rect x="{PLOT_LEFT}" y="{top}" width="{:.1}" height="{BAR}" fill="{}"><title>{}, {}: {value:.2}{}</title></rect>"##,
                        end - PLOT_LEFT,
                        series.colour,
                        escape(&group.label),
                        escape(&format!("{} {}", row.label, series.name)),
                        range_text
                    );
                    let mut text_x = end;
                    if let Some((lo, hi)) = range {
                        let (x0, x1, mid) = (x_of(lo.max(0.0)), x_of(hi.max(0.0)), top + BAR / 2.0);
                        let _ = writeln!(
                            svg,
                            r##"<path d="M{x0:.1} {mid}H{x1:.1}M{x0:.1} {:.1}V{:.1}M{x1:.1} {:.1}V{:.1}" stroke="#222" stroke-width="1" fill="none"/>"##,
                            top + 2.0,
                            top + BAR - 2.0,
                            top + 2.0,
                            top + BAR - 2.0
                        );
                        text_x = text_x.max(x1);
                    }
                    let _ = writeln!(
                        svg,
                        r##"<text x="{:.1}" y="{}" font-size="10" fill="#333">{value:.decimals_shown$}</text>"##,
                        text_x + 4.0,
                        top + BAR - 1.0
                    );
                }
                y += row_height;
            }
            y += GROUP_GAP;
        }
        svg += "</svg>\n";
        svg
    }
}

/// A round step of at least `raw` (1, 2, 2.5 or 5 times a power of ten)
/// and the decimals its multiples need.
fn tick_step(raw: f64) -> (f64, usize) {
    if raw.is_nan() || raw <= 0.0 {
        return (1.0, 0);
    }
    let power = raw.log10().floor();
    let magnitude = 10f64.powf(power);
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&s| s >= raw)
        .unwrap_or(10.0 * magnitude);
    let mut decimals = 0;
    while decimals < 6 && ((step * 10f64.powi(decimals as i32)).fract()).abs() > 1e-9 {
        decimals += 1;
    }
    (step, decimals)
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
