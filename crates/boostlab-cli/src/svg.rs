//! SVG line charts with plotters (SVG backend: text is written as `<text>` elements, so no system
//! fonts are needed).

use std::path::Path;

use anyhow::{anyhow, Result};
use plotters::prelude::*;

/// One line of a chart: a value per round (round 1 first).
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Values; non-finite values are skipped.
    pub values: Vec<f64>,
    /// Dashed instead of solid.
    pub dashed: bool,
}

/// Colour of the i-th base name (a series and its dashed twin share it).
fn colour(i: usize) -> RGBColor {
    const C: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    C[i % C.len()]
}

/// Base name of a series: its name without a trailing ` (clipped)`, ` max` or ` min`.
fn base(name: &str) -> &str {
    for suffix in [" (clipped)", " max", " min"] {
        if let Some(b) = name.strip_suffix(suffix) {
            return b;
        }
    }
    name
}

/// Draws `series` against the round number into an SVG file (log-scaled y axis if `log_y`).
pub fn line_chart(path: &Path, title: &str, y_label: &str, series: &[Series], log_y: bool) -> Result<()> {
    let e = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
    let rounds = series.iter().map(|s| s.values.len()).max().unwrap_or(1).max(2);
    let finite = series.iter().flat_map(|s| s.values.iter().copied()).filter(|v| v.is_finite() && (!log_y || *v > 0.0));
    let (mut lo, mut hi) = finite.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    if !lo.is_finite() {
        (lo, hi) = (if log_y { 1e-3 } else { 0.0 }, 1.0);
    }
    if log_y {
        (lo, hi) = (lo / 1.5, hi * 1.5);
    } else {
        let pad = ((hi - lo) * 0.05).max(1e-3);
        (lo, hi) = ((lo - pad).max(if lo >= 0.0 { 0.0 } else { f64::NEG_INFINITY }), hi + pad);
    }
    let bases: Vec<&str> = {
        let mut v: Vec<&str> = Vec::new();
        for s in series {
            if !v.contains(&base(&s.name)) {
                v.push(base(&s.name));
            }
        }
        v
    };
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut builder = ChartBuilder::on(&root);
    builder.caption(title, ("sans-serif", 18)).margin(10).x_label_area_size(35).y_label_area_size(60);
    let style = |s: &Series| {
        ShapeStyle::from(&colour(bases.iter().position(|b| *b == base(&s.name)).unwrap_or(0)))
            .stroke_width(if s.dashed { 1 } else { 2 })
    };
    let points = |s: &Series| -> Vec<(f64, f64)> {
        s.values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.is_finite() && (!log_y || **v > 0.0))
            .map(|(j, v)| ((j + 1) as f64, *v))
            .collect()
    };
    macro_rules! draw {
        ($chart:expr) => {{
            let mut chart = $chart;
            chart
                .configure_mesh()
                .x_desc("round")
                .y_desc(y_label)
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(|x| e(&x))?;
            for s in series {
                let st = style(s);
                let pts = points(s);
                if s.dashed {
                    chart
                        .draw_series(DashedLineSeries::new(pts, 6, 4, st))
                        .map_err(|x| e(&x))?
                        .label(s.name.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], st));
                } else {
                    chart
                        .draw_series(LineSeries::new(pts, st))
                        .map_err(|x| e(&x))?
                        .label(s.name.clone())
                        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], st));
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::UpperRight)
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK.mix(0.3))
                .label_font(("sans-serif", 11))
                .draw()
                .map_err(|x| e(&x))?;
        }};
    }
    let xr = 1f64..rounds as f64;
    if log_y {
        draw!(builder.build_cartesian_2d(xr, (lo..hi).log_scale()).map_err(|x| e(&x))?);
    } else {
        draw!(builder.build_cartesian_2d(xr, lo..hi).map_err(|x| e(&x))?);
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// Most bars [`bar_chart`] draws (the largest values).
pub const MAX_BARS: usize = 40;

/// Horizontal bars, one per `(name, value)` in the given order from the top (at most
/// [`MAX_BARS`]), into an SVG file (feature importances).
pub fn bar_chart(path: &Path, title: &str, x_label: &str, bars: &[(String, f64)]) -> Result<()> {
    let e = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
    let bars = &bars[..bars.len().min(MAX_BARS)];
    let n = bars.len().max(1);
    let hi = bars.iter().map(|b| b.1).filter(|v| v.is_finite()).fold(0.0f64, f64::max).max(1e-12) * 1.05;
    let height = (120 + 22 * n).clamp(260, 1200) as u32;
    let root = SVGBackend::new(path, (760, height)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let name_width = bars.iter().map(|b| b.0.chars().count()).max().unwrap_or(4).clamp(4, 30) as u32 * 7 + 10;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(name_width)
        .build_cartesian_2d(0.0..hi, (0..n).into_segmented())
        .map_err(|x| e(&x))?;
    // Row `n − 1 − i` (from the bottom) holds bar i, so the first bar is at the top.
    let label = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(r) if *r < bars.len() => bars[bars.len() - 1 - r].0.clone(),
        _ => String::new(),
    };
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_labels(n)
        .y_label_formatter(&label)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|x| e(&x))?;
    let style = ShapeStyle::from(&colour(0)).filled();
    chart
        .draw_series(bars.iter().enumerate().map(|(i, (_, v))| {
            let r = bars.len() - 1 - i;
            let v = if v.is_finite() { *v } else { 0.0 };
            Rectangle::new([(0.0, SegmentValue::Exact(r)), (v, SegmentValue::Exact(r + 1))], style)
        }))
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

/// Lines through `(x, y)` points, one per named curve, on x ∈ [−1, 1] and y ∈ [0, 1]
/// (cumulative margin distributions), into an SVG file.
pub fn xy_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    curves: &[(String, Vec<(f64, f64)>)],
) -> Result<()> {
    let e = |e: &dyn std::fmt::Display| anyhow!("{}: {e}", path.display());
    let root = SVGBackend::new(path, (760, 460)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(10)
        .x_label_area_size(35)
        .y_label_area_size(60)
        .build_cartesian_2d(-1.0f64..1.0, 0.0f64..1.02)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .light_line_style(WHITE.mix(0.0))
        .draw()
        .map_err(|x| e(&x))?;
    for (i, (name, pts)) in curves.iter().enumerate() {
        let st = ShapeStyle::from(&colour(i)).stroke_width(2);
        chart
            .draw_series(LineSeries::new(pts.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()), st))
            .map_err(|x| e(&x))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], st));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .label_font(("sans-serif", 11))
        .draw()
        .map_err(|x| e(&x))?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_an_svg_with_text_and_one_path_per_series() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path().join("x.svg");
        let s = vec![
            Series { name: "a".into(), values: vec![0.5, 0.3, 0.2], dashed: false },
            Series { name: "a (clipped)".into(), values: vec![0.5, 0.35, f64::NAN], dashed: true },
        ];
        line_chart(&p, "demo", "test error", &s, false).expect("plot");
        let svg = std::fs::read_to_string(&p).expect("read");
        assert!(
            svg.starts_with("<svg") && svg.contains("<text") && svg.contains("demo"),
            "{}",
            &svg[..200.min(svg.len())]
        );
        assert!(svg.contains("a (clipped)"));
        line_chart(&p, "log", "w", &s, true).expect("log plot");
    }
}
