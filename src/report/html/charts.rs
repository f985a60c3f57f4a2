//! Inline SVG charts drawn here, no library: a line chart (coverage and pass rate per round,
//! trends across sessions) and horizontal bars (the confidence dimensions). Colours come from the
//! stylesheet's series classes (`s0`…`s5`), so dark mode and print restyle them.

use std::fmt::Write as _;

use super::escape::esc;

/// Colour classes cycle after this many series.
pub const PALETTE: usize = 6;

/// One line: `(x, y)` points in order, and an optional horizontal target in the same colour.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub target: Option<f64>,
}

/// How a line chart reads: its axes' meaning and the tick labels of the x axis.
pub struct LineChart<'a> {
    /// The `id` of the `<svg>` (the integration test looks for it).
    pub id: &'a str,
    pub title: &'a str,
    pub y_label: &'a str,
    /// Under the x axis.
    pub x_label: &'a str,
    pub y_max: f64,
    /// `(x, label)` for each tick; the x range is theirs.
    pub x_ticks: Vec<(f64, String)>,
    /// Appended to a point's value in its tooltip (`%`).
    pub unit: &'a str,
    pub width: f64,
    pub height: f64,
}

const LEFT: f64 = 44.0;
const RIGHT: f64 = 30.0;
const TOP: f64 = 12.0;
const BOTTOM: f64 = 40.0;

/// The chart as `<svg>` followed by an HTML legend (readable without colour: names and targets).
pub fn line_chart(c: &LineChart, series: &[Series]) -> String {
    let (w, h) = (c.width, c.height);
    let plot_w = w - LEFT - RIGHT;
    let plot_h = h - TOP - BOTTOM;
    let x_min = c.x_ticks.iter().map(|t| t.0).fold(f64::INFINITY, f64::min);
    let x_max = c
        .x_ticks
        .iter()
        .map(|t| t.0)
        .fold(f64::NEG_INFINITY, f64::max);
    let (x_min, x_max) = if x_min.is_finite() && x_max > x_min {
        (x_min, x_max)
    } else {
        (x_min.min(0.0).min(x_max), x_min.max(0.0) + 1.0)
    };
    let x = |v: f64| LEFT + (v - x_min) / (x_max - x_min) * plot_w;
    let y = |v: f64| TOP + plot_h - (v.clamp(0.0, c.y_max) / c.y_max) * plot_h;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{}\"><title>{}</title>",
        c.id,
        esc(c.title),
        esc(c.title)
    );
    // Horizontal grid every quarter of the y range, with labels.
    for i in 0..=4 {
        let v = c.y_max * f64::from(i) / 4.0;
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            w - RIGHT,
            y(v),
            y(v),
            LEFT - 5.0,
            y(v) + 4.0,
            v.round()
        );
    }
    let _ = write!(
        s,
        "<line class=\"axis\" x1=\"{LEFT}\" x2=\"{LEFT}\" y1=\"{TOP}\" y2=\"{:.1}\"/><line class=\"axis\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"/>",
        TOP + plot_h,
        w - RIGHT,
        TOP + plot_h,
        TOP + plot_h
    );
    for (v, label) in &c.x_ticks {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            x(*v),
            h - BOTTOM + 16.0,
            esc(label)
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
        LEFT + plot_w / 2.0,
        h - 4.0,
        esc(c.x_label)
    );
    let _ = write!(
        s,
        "<text x=\"12\" y=\"{:.1}\" transform=\"rotate(-90 12 {:.1})\" text-anchor=\"middle\">{}</text>",
        TOP + plot_h / 2.0,
        TOP + plot_h / 2.0,
        esc(c.y_label)
    );
    for (i, sr) in series.iter().enumerate() {
        let class = format!("s{}", i % PALETTE);
        if let Some(t) = sr.target {
            let _ = write!(
                s,
                "<line class=\"target {class}\" x1=\"{LEFT}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\"><title>{} target {t:.1}{}</title></line>",
                w - RIGHT,
                y(t),
                y(t),
                esc(&sr.name),
                c.unit
            );
        }
        if sr.points.len() > 1 {
            let pts: Vec<String> = sr
                .points
                .iter()
                .map(|(a, b)| format!("{:.1},{:.1}", x(*a), y(*b)))
                .collect();
            let _ = write!(
                s,
                "<polyline class=\"{class}\" points=\"{}\"/>",
                pts.join(" ")
            );
        }
        for (a, b) in &sr.points {
            let _ = write!(
                s,
                "<circle class=\"{class}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\"><title>{}: {b:.1}{}</title></circle>",
                x(*a),
                y(*b),
                esc(&sr.name),
                c.unit
            );
        }
    }
    s.push_str("</svg><div class=\"legend\">");
    for (i, sr) in series.iter().enumerate() {
        let target = sr.target.map_or(String::new(), |t| {
            format!(" (target {t:.0}{}, dashed)", c.unit)
        });
        let _ = write!(
            s,
            "<span><i class=\"k{}\"></i>{}{target}</span>",
            i % PALETTE,
            esc(&sr.name)
        );
    }
    s.push_str("</div>");
    s
}

/// Horizontal bars of values in 0..=1, one per `(label, value)`, with the value written out.
pub fn bars(id: &str, title: &str, items: &[(&str, f64)]) -> String {
    let row = 24.0;
    let label_w = 190.0;
    let bar_w = 300.0;
    let w = label_w + bar_w + 60.0;
    let h = row * items.len() as f64 + 6.0;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"{id}\" viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{t}\"><title>{t}</title>",
        t = esc(title)
    );
    for (i, (label, v)) in items.iter().enumerate() {
        let top = 3.0 + row * i as f64;
        let len = bar_w * v.clamp(0.0, 1.0);
        let _ = write!(
            s,
            "<text x=\"0\" y=\"{:.1}\">{}</text><rect class=\"grid\" x=\"{label_w}\" y=\"{:.1}\" width=\"{bar_w}\" height=\"14\" fill=\"none\"/><rect class=\"bar s{}\" x=\"{label_w}\" y=\"{:.1}\" width=\"{len:.1}\" height=\"14\"/><text x=\"{:.1}\" y=\"{:.1}\">{v:.2}</text>",
            top + 12.0,
            esc(label),
            top,
            i % PALETTE,
            top,
            label_w + bar_w + 6.0,
            top + 12.0
        );
    }
    s.push_str("</svg>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_chart_names_its_series_as_text() {
        let chart = LineChart {
            id: "c",
            title: "t",
            y_label: "%",
            x_label: "round",
            y_max: 100.0,
            x_ticks: vec![(0.0, "0".into()), (1.0, "1".into())],
            unit: "%",
            width: 400.0,
            height: 200.0,
        };
        let svg = line_chart(
            &chart,
            &[Series {
                name: "<L1>".into(),
                points: vec![(0.0, 50.0), (1.0, 90.0)],
                target: Some(80.0),
            }],
        );
        assert!(svg.contains("<polyline"), "{svg}");
        assert!(svg.contains("&lt;L1&gt;") && !svg.contains("<L1>"), "{svg}");
        assert!(svg.contains("class=\"target s0\""), "{svg}");
    }
}
