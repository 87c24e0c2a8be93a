//! Line charts as inline SVG, drawn by `plotters` (SVG backend only, no fonts: the
//! browser renders the text), for the HTML report.
//!
//! Owns the chart look (size, palette, axes with units, the legend below the plot so
//! it never hides data, an optional marked x position such as the knee, drawn dashed
//! in the plot and in the legend alike, shaded x bands) and number formatting on axes. Knows nothing about
//! runs or sweeps: `output::html` builds `Chart`s from them. Uses a well-kept crate
//! rather than SVG assembled by hand.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::output::error::RenderError;

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Series {
    /// Legend text (also written into the SVG, so tests can find every series).
    pub(crate) name: String,
    /// Points (x, y), in x order.
    pub(crate) points: Vec<(f64, f64)>,
}

impl Series {
    /// A series named `name` with these points.
    pub(crate) fn new(name: &str, points: Vec<(f64, f64)>) -> Series {
        Series {
            name: name.to_string(),
            points,
        }
    }
}

/// Shaded x intervals with one legend entry (e.g. the client-bound steps of a sweep).
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Bands {
    /// Legend text.
    pub(crate) label: String,
    /// The intervals (from, to) in x units; clipped to the axis.
    pub(crate) spans: Vec<(f64, f64)>,
}

/// A chart: title, axis descriptions (with units), lines, an optional mark and
/// shaded bands. The legend goes below the plot, never over the data.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Chart {
    /// Title above the plot.
    pub(crate) title: String,
    /// X axis description, with its unit.
    pub(crate) x_desc: String,
    /// Y axis description, with its unit.
    pub(crate) y_desc: String,
    /// The lines.
    pub(crate) series: Vec<Series>,
    /// A vertical line at this x, with its legend text (e.g. the knee).
    pub(crate) mark: Option<(f64, String)>,
    /// Draw a dot on every point (for sweeps, where each point is a run).
    pub(crate) dots: bool,
    /// Labels for integer x positions instead of numbers (e.g. `99.9%`).
    pub(crate) x_names: Vec<String>,
    /// Shaded x intervals behind the lines, when there are any.
    pub(crate) bands: Option<Bands>,
    /// The x axis range, instead of the range of the points.
    pub(crate) x_range: Option<(f64, f64)>,
    /// The y values are counts: ticks and grid lines at whole numbers only, the axis
    /// up to a whole number.
    pub(crate) integer_y: bool,
}

/// Width of a chart in pixels.
pub(crate) const WIDTH: u32 = 900;
/// Height of the plot (title, axes, data) in pixels; the legend adds rows below it.
pub(crate) const PLOT_HEIGHT: u32 = 380;
/// Height of a legend row.
const ROW: u32 = 20;
/// Left edge of the plot area (margin + y label area): where the legend starts.
const PLOT_LEFT: u32 = 14 + 72;
/// Width of a legend entry's sample (line, dash pattern, band).
const KEY: i32 = 28;
/// Estimated width of a legend character at 13 px (the browser renders the text).
const CHAR_PX: f64 = 7.0;

/// Line colours: distinguishable, also in grey scale order.
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(23, 190, 207),
];

/// The colour of the mark (knee).
const MARK: RGBColor = RGBColor(214, 39, 40);
/// The mark's dash pattern: dash and gap, pixels (chart and legend alike).
const DASH: (u32, u32) = (6, 4);
/// The colour of the bands (`#FF9800` in the SVG) and its opacity.
pub(crate) const BAND: RGBColor = RGBColor(255, 152, 0);
const BAND_OPACITY: f64 = 0.22;

/// A number as short as it reads exactly: integers without decimals, others with up to
/// 3 decimals. The axes' and labels' spelling, and the sweep table's (`sweep::table`).
pub(crate) fn axis_number(v: f64) -> String {
    if v == v.trunc() && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// The range of `values` padded for drawing: [min, max] widened when empty or flat.
fn range(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
        hi = if hi > 0.0 { hi * 1.08 } else { 1.0 };
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi)
}

/// What a legend entry shows before its text.
#[derive(Debug, Clone, Copy)]
enum Key {
    /// A series: its colour, with a dot when the chart draws dots.
    Line(RGBColor, bool),
    /// The mark's dashed line.
    Mark,
    /// A band's shading.
    Band,
}

/// The legend entries of `chart`, in drawing order.
fn legend(chart: &Chart) -> Vec<(Key, &str)> {
    let mut keys: Vec<(Key, &str)> = chart
        .series
        .iter()
        .enumerate()
        .map(|(k, s)| {
            (
                Key::Line(PALETTE[k % PALETTE.len()], chart.dots),
                s.name.as_str(),
            )
        })
        .collect();
    if let Some((_, label)) = &chart.mark {
        keys.push((Key::Mark, label.as_str()));
    }
    if let Some(b) = chart.bands.as_ref().filter(|b| !b.spans.is_empty()) {
        keys.push((Key::Band, b.label.as_str()));
    }
    keys
}

/// The legend laid out in rows left to right: each entry's (x, row) in pixels.
fn layout(entries: &[(Key, &str)]) -> Vec<(i32, u32)> {
    let (mut x, mut row) = (PLOT_LEFT as f64, 0u32);
    let right = f64::from(WIDTH - 14);
    entries
        .iter()
        .map(|(_, text)| {
            let w = f64::from(KEY as u32 + 8) + text.chars().count() as f64 * CHAR_PX + 24.0;
            if x + w > right && x > PLOT_LEFT as f64 {
                x = PLOT_LEFT as f64;
                row += 1;
            }
            let at = (x as i32, row);
            x += w;
            at
        })
        .collect()
}

/// The chart's height: the plot and the legend's rows.
fn height(chart: &Chart) -> u32 {
    let entries = legend(chart);
    let rows = layout(&entries).last().map_or(0, |&(_, r)| r + 1);
    PLOT_HEIGHT + rows * ROW + if rows > 0 { 8 } else { 0 }
}

/// The chart as an `<svg>` element (no XML declaration).
pub(crate) fn svg(chart: &Chart) -> Result<String, RenderError> {
    let mut buf = String::new();
    draw(chart, &mut buf).map_err(|e| RenderError::Chart {
        title: chart.title.clone(),
        cause: e.to_string(),
    })?;
    // The backend writes one SVG document; keep the element only.
    let start = buf.find("<svg").unwrap_or(0);
    Ok(buf[start..].trim_end().to_string())
}

/// The segments of a dashed line from `from` to `to` pixels along one axis.
fn dashes(from: i32, to: i32) -> Vec<(i32, i32)> {
    let (on, off) = (DASH.0 as i32, DASH.1 as i32);
    (from..to)
        .step_by((on + off) as usize)
        .map(|a| (a, (a + on).min(to)))
        .collect()
}

fn draw<'a>(chart: &Chart, buf: &'a mut String) -> Result<(), Box<dyn std::error::Error + 'a>> {
    let xs = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0));
    let xs = xs.chain(chart.mark.iter().map(|m| m.0));
    let (x0, x1) = chart.x_range.unwrap_or_else(|| {
        let (lo, hi) = range(xs, false);
        // Points that are runs (dots) and the mark stay clear of the axes.
        let pad = if chart.dots { (hi - lo) * 0.03 } else { 0.0 };
        (lo - pad, hi + pad)
    });
    let ys = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let (y0, mut y1) = range(ys, true);
    if chart.integer_y {
        y1 = y1.ceil().max(1.0);
    }
    let root = SVGBackend::with_string(buf, (WIDTH, height(chart))).into_drawing_area();
    root.fill(&WHITE)?;
    let (plot, below) = root.split_vertically(PLOT_HEIGHT);
    let mut ctx = ChartBuilder::on(&plot)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(14)
        // Room for the last x label, centred on the right edge.
        .margin_right(36)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    let names = &chart.x_names;
    let x_fmt = |v: &f64| {
        if names.is_empty() {
            axis_number(*v)
        } else if v.fract() == 0.0 && *v >= 0.0 {
            names.get(*v as usize).cloned().unwrap_or_default()
        } else {
            String::new()
        }
    };
    let integer_y = chart.integer_y;
    let y_fmt = |v: &f64| match integer_y && v.fract() != 0.0 {
        true => String::new(),
        false => axis_number(*v),
    };
    let mut mesh = ctx.configure_mesh();
    mesh.x_desc(chart.x_desc.as_str())
        .y_desc(chart.y_desc.as_str())
        .label_style(("sans-serif", 13))
        .axis_desc_style(("sans-serif", 14))
        .light_line_style(RGBColor(238, 238, 238))
        .bold_line_style(RGBColor(215, 215, 215))
        .x_label_formatter(&x_fmt)
        .y_label_formatter(&y_fmt);
    if !names.is_empty() {
        mesh.x_labels(names.len());
    }
    if integer_y {
        // At most 11 whole-number ticks; no grid between them.
        let span = (y1 - y0).round() as usize;
        mesh.y_labels(if span <= 10 { span + 1 } else { 11 })
            .y_max_light_lines(0);
    }
    mesh.draw()?;
    if let Some(b) = &chart.bands {
        let shade = BAND.mix(BAND_OPACITY).filled();
        ctx.draw_series(
            b.spans
                .iter()
                .map(|&(a, z)| (a.max(x0), z.min(x1)))
                .filter(|(a, z)| a < z)
                .map(|(a, z)| Rectangle::new([(a, y0), (z, y1)], shade)),
        )?;
    }
    for (k, s) in chart.series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        ctx.draw_series(LineSeries::new(
            s.points.iter().copied(),
            color.stroke_width(2),
        ))?;
        if chart.dots {
            ctx.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    if let Some((x, _)) = &chart.mark {
        let line = vec![(*x, y0), (*x, y1)];
        ctx.draw_series(DashedLineSeries::new(
            line,
            DASH.0,
            DASH.1,
            MARK.stroke_width(2),
        ))?;
    }
    let entries = legend(chart);
    let text =
        TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for ((key, label), (x, row)) in entries.iter().zip(layout(&entries)) {
        let y = (row * ROW + ROW / 2 + 4) as i32;
        match *key {
            Key::Line(color, dot) => {
                below.draw(&PathElement::new(
                    vec![(x, y), (x + KEY, y)],
                    color.stroke_width(2),
                ))?;
                if dot {
                    below.draw(&Circle::new((x + KEY / 2, y), 3, color.filled()))?;
                }
            }
            Key::Mark => {
                for (a, z) in dashes(x, x + KEY) {
                    below.draw(&PathElement::new(
                        vec![(a, y), (z, y)],
                        MARK.stroke_width(2),
                    ))?;
                }
            }
            Key::Band => {
                below.draw(&Rectangle::new(
                    [(x, y - 7), (x + KEY, y + 7)],
                    BAND.mix(BAND_OPACITY).filled(),
                ))?;
            }
        }
        below.draw(&Text::new(
            label.to_string(),
            (x + KEY + 8, y),
            text.clone(),
        ))?;
    }
    root.present()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn axis_numbers_are_short() {
        assert_eq!(axis_number(3000.0), "3000");
        assert_eq!(axis_number(2.5), "2.5");
        assert_eq!(axis_number(0.123456), "0.123");
        assert_eq!(axis_number(-1.0), "-1");
    }

    /// The elements of `svg` named `tag`, as (attributes, text).
    fn elements(svg: &str, tag: &str) -> Vec<(Vec<(String, String)>, String)> {
        let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
        doc.descendants()
            .filter(|n| n.tag_name().name() == tag)
            .map(|n| {
                let attrs = n
                    .attributes()
                    .map(|a| (a.name().to_string(), a.value().to_string()))
                    .collect();
                (attrs, n.text().unwrap_or_default().trim().to_string())
            })
            .collect()
    }

    fn attr(attrs: &[(String, String)], name: &str) -> f64 {
        attrs
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.parse().ok())
            .unwrap_or_else(|| panic!("no numeric {name} in {attrs:?}"))
    }

    fn sample() -> Chart {
        Chart {
            title: "Reply rate".into(),
            x_desc: "demanded rate [req/s]".into(),
            y_desc: "rate [req/s]".into(),
            series: vec![
                Series::new("demanded", vec![(100.0, 100.0), (200.0, 200.0)]),
                Series::new("achieved", vec![(100.0, 99.0), (200.0, 150.0)]),
            ],
            mark: Some((100.0, "knee 100 conn/s".into())),
            dots: true,
            bands: Some(Bands {
                label: "client-bound".into(),
                spans: vec![(150.0, 250.0)],
            }),
            ..Chart::default()
        }
    }

    #[test]
    fn a_chart_is_one_svg_element_with_every_series_named() {
        let svg = svg(&sample()).expect("draws");
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.ends_with("</svg>"));
        for text in [
            "Reply rate",
            "demanded",
            "achieved",
            "knee 100 conn/s",
            "rate [req/s]",
            "client-bound",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // Empty charts still draw (axes only).
        assert!(svg_ok(&Chart::default()));
    }

    #[test]
    fn the_legend_sits_below_the_plot_and_keys_look_like_the_plot() {
        let svg = svg(&sample()).expect("draws");
        let texts = elements(&svg, "text");
        let legend: Vec<&str> = ["demanded", "achieved", "knee 100 conn/s", "client-bound"]
            .into_iter()
            .filter(|name| {
                let (attrs, _) = texts.iter().find(|(_, t)| t == name).expect("legend text");
                attr(attrs, "y") > f64::from(PLOT_HEIGHT)
            })
            .collect();
        assert_eq!(
            legend.len(),
            4,
            "every legend entry below the plot: {legend:?}"
        );
        // The mark: dashes of 6 px with gaps of 4 px, in the plot and in the legend.
        let red: Vec<(f64, f64, f64, f64)> = elements(&svg, "polyline")
            .iter()
            .chain(elements(&svg, "line").iter())
            .filter(|(a, _)| a.iter().any(|(n, v)| n == "stroke" && v == "#D62728"))
            .filter_map(|(a, _)| {
                let pts = a.iter().find(|(n, _)| n == "points")?.1.clone();
                let xy: Vec<f64> = pts
                    .split([' ', ','])
                    .filter(|s| !s.is_empty())
                    .map(|s| s.parse().expect("number"))
                    .collect();
                (xy.len() == 4).then(|| (xy[0], xy[1], xy[2], xy[3]))
            })
            .collect();
        let vertical = red.iter().filter(|s| s.0 == s.2).count();
        let horizontal: Vec<_> = red.iter().filter(|s| s.1 == s.3).collect();
        assert!(vertical > 10, "a dashed line in the plot: {red:?}");
        assert_eq!(horizontal.len(), 3, "three dashes in the legend: {red:?}");
        for d in &horizontal {
            assert_eq!(d.2 - d.0, 6.0, "{d:?}");
            assert!(d.1 > f64::from(PLOT_HEIGHT));
        }
        assert_eq!(horizontal[1].0 - horizontal[0].2, 4.0);
        // The band: shaded in the plot and in the legend, with one colour.
        let bands: Vec<_> = elements(&svg, "rect")
            .into_iter()
            .filter(|(a, _)| a.iter().any(|(n, v)| n == "fill" && v == "#FF9800"))
            .collect();
        assert_eq!(bands.len(), 2, "{bands:?}");
        assert!(attr(&bands[0].0, "y") < f64::from(PLOT_HEIGHT));
        assert!(attr(&bands[1].0, "y") > f64::from(PLOT_HEIGHT));
        assert_eq!(attr(&bands[0].0, "opacity"), attr(&bands[1].0, "opacity"));
    }

    #[test]
    fn a_count_axis_has_whole_number_ticks_only() {
        // Three connections at most: ticks 0, 1, 2, 3, not 0.1 … 0.9.
        let chart = |integer_y| Chart {
            title: "Open connections".into(),
            series: vec![Series::new(
                "open",
                vec![
                    (0.0, 1.0),
                    (1.0, 1.0),
                    (1.0, 3.0),
                    (2.0, 3.0),
                    (2.0, 0.0),
                    (3.0, 0.0),
                ],
            )],
            integer_y,
            ..Chart::default()
        };
        let labels = |c: &Chart| -> Vec<String> {
            let svg = svg(c).expect("draws");
            elements(&svg, "text")
                .into_iter()
                .filter(|(a, _)| a.iter().any(|(n, v)| n == "text-anchor" && v == "end"))
                .map(|(_, t)| t)
                .collect()
        };
        let y = labels(&chart(true));
        assert!(!y.is_empty());
        assert!(y.iter().all(|t| t.parse::<u64>().is_ok()), "{y:?}");
        assert!(y.contains(&"3".to_string()), "{y:?}");
        // Without the flag, the same data gets fractional ticks: the test sees them.
        let fractional = labels(&chart(false));
        assert!(fractional.iter().any(|t| t.contains('.')), "{fractional:?}");
    }

    fn svg_ok(c: &Chart) -> bool {
        super::svg(c).is_ok()
    }
}
