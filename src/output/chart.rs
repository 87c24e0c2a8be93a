//! Line charts as inline SVG, drawn by `plotters` (SVG backend only, no fonts: the
//! browser renders the text), for the HTML report.
//!
//! Owns the chart look (size, palette, axes with units, legend, an optional marked
//! x position such as the knee) and number formatting on axes. Knows nothing about
//! runs or sweeps: `report::html` builds `Chart`s from them. Uses a well-kept crate
//! rather than SVG assembled by hand.

use plotters::prelude::*;

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

/// A chart: title, axis descriptions (with units), lines, and an optional mark.
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
    /// Labels for integer x positions instead of numbers (e.g. `p99.9`).
    pub(crate) x_names: Vec<String>,
}

/// Chart size in pixels.
pub(crate) const SIZE: (u32, u32) = (900, 380);

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

/// A number for an axis: integers without decimals, others with up to 3 significant
/// decimals.
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

fn draw<'a>(chart: &Chart, buf: &'a mut String) -> Result<(), Box<dyn std::error::Error + 'a>> {
    let xs = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0));
    let xs = xs.chain(chart.mark.iter().map(|m| m.0));
    let (x0, x1) = range(xs, false);
    let ys = chart
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1));
    let (y0, y1) = range(ys, true);
    let root = SVGBackend::with_string(buf, SIZE).into_drawing_area();
    root.fill(&WHITE)?;
    let mut ctx = ChartBuilder::on(&root)
        .caption(&chart.title, ("sans-serif", 20))
        .margin(14)
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
    let y_fmt = |v: &f64| axis_number(*v);
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
    mesh.draw()?;
    for (k, s) in chart.series.iter().enumerate() {
        let color = PALETTE[k % PALETTE.len()];
        ctx.draw_series(LineSeries::new(
            s.points.iter().copied(),
            color.stroke_width(2),
        ))?
        .label(s.name.as_str())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], color.stroke_width(3)));
        if chart.dots {
            ctx.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    if let Some((x, label)) = &chart.mark {
        let line = vec![(*x, y0), (*x, y1)];
        ctx.draw_series(DashedLineSeries::new(line, 6, 4, MARK.stroke_width(2)))?
            .label(label.as_str())
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 22, y)], MARK.stroke_width(2)));
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(160, 160, 160))
        .label_font(("sans-serif", 13))
        .draw()?;
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

    #[test]
    fn a_chart_is_one_svg_element_with_every_series_named() {
        let chart = Chart {
            title: "Reply rate".into(),
            x_desc: "demanded rate [conn/s]".into(),
            y_desc: "rate [replies/s]".into(),
            series: vec![
                Series::new("demanded", vec![(100.0, 100.0), (200.0, 200.0)]),
                Series::new("achieved", vec![(100.0, 99.0), (200.0, 150.0)]),
            ],
            mark: Some((100.0, "knee 100 conn/s".into())),
            dots: true,
            x_names: Vec::new(),
        };
        let svg = svg(&chart).expect("draws");
        assert!(svg.starts_with("<svg"), "{}", &svg[..40]);
        assert!(svg.ends_with("</svg>"));
        for text in [
            "Reply rate",
            "demanded",
            "achieved",
            "knee 100 conn/s",
            "rate [replies/s]",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // Empty charts still draw (axes only).
        assert!(svg_ok(&Chart::default()));
    }

    fn svg_ok(c: &Chart) -> bool {
        super::svg(c).is_ok()
    }
}
