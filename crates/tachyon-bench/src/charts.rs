//! SVG charts drawn with plotters from report data (never from memory).

use plotters::prelude::*;

/// Grid lines: visible, never competing with the data.
const GRID: RGBColor = RGBColor(225, 225, 225);

/// A line per series; x is drawn on a log2 axis when `log_x`.
pub fn lines(
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_x: bool,
) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (820, 460)).into_drawing_area();
        root.fill(&WHITE)?;
        // The legend gets its own column: inside the plot it hid the lines
        // that end where it sat (eight servers fill every corner).
        let (plot, side) = root.split_horizontally(690);
        let fx = |x: f64| if log_x { x.max(1e-9).log2() } else { x };
        let xs: Vec<f64> = series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|(x, _)| fx(*x)))
            .collect();
        let ys: Vec<f64> = series
            .iter()
            .flat_map(|(_, p)| p.iter().map(|(_, y)| *y))
            .collect();
        let (x0, x1) = bounds(&xs);
        let y1 = ys.iter().cloned().fold(0.0, f64::max) * 1.12 + 1e-9;
        let mut chart = ChartBuilder::on(&plot)
            .caption(title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(x0..x1, 0.0..y1)?;
        // On a log2 axis only powers of two are labelled and gridded: they
        // are the values the suites measure (1, 2, 4 … connections).
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_desc(y_label)
            .x_label_formatter(&|x| {
                if !log_x {
                    format!("{x:.0}")
                } else if (x - x.round()).abs() < 1e-6 {
                    format!("{:.0}", 2f64.powf(x.round()))
                } else {
                    String::new()
                }
            })
            .y_label_formatter(&|y| if *y == 0.0 { "0".into() } else { human(*y) })
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .set_all_tick_mark_size(if log_x { 0 } else { 5 })
            .disable_x_mesh()
            .draw()?;
        if log_x {
            for e in x0.ceil() as i64..=x1.floor() as i64 {
                let x = e as f64;
                chart.draw_series(LineSeries::new([(x, 0.0), (x, y1)], GRID))?;
            }
        }
        for (i, (name, points)) in series.iter().enumerate() {
            let color = palette(i);
            let pts: Vec<(f64, f64)> = points.iter().map(|(x, y)| (fx(*x), *y)).collect();
            chart.draw_series(LineSeries::new(
                pts.clone(),
                color.stroke_width(if name == "tachyon" { 3 } else { 2 }),
            ))?;
            chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
            let y = 60 + 24 * i as i32;
            side.draw(&PathElement::new(
                vec![(6, y), (28, y)],
                color.stroke_width(3),
            ))?;
            side.draw(&Text::new(
                name.clone(),
                (34, y - 7),
                ("sans-serif", 14).into_font(),
            ))?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// Horizontal bars, one per (label, value), longest first as given.
pub fn bars(title: &str, x_label: &str, items: &[(String, f64)]) -> anyhow::Result<String> {
    let mut svg = String::new();
    {
        let height = 90 + 34 * items.len() as u32;
        let root = SVGBackend::with_string(&mut svg, (820, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let max = items.iter().map(|(_, v)| *v).fold(0.0, f64::max) * 1.15 + 1e-9;
        let n = items.len() as f64;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 20))
            .margin(14)
            .x_label_area_size(40)
            .y_label_area_size(120)
            .build_cartesian_2d(0.0..max, 0.0..n)?;
        let labels: Vec<String> = items.iter().map(|(l, _)| l.clone()).collect();
        chart
            .configure_mesh()
            .x_desc(x_label)
            .y_labels(items.len().max(1))
            .y_label_formatter(&|y| {
                let i = (n - y - 0.5).round();
                if i >= 0.0 && (i as usize) < labels.len() && (y.fract() - 0.5).abs() < 0.01 {
                    labels[i as usize].clone()
                } else {
                    String::new()
                }
            })
            .x_label_formatter(&|x| human(*x))
            .disable_y_mesh()
            .draw()?;
        for (i, (name, value)) in items.iter().enumerate() {
            let y = n - i as f64;
            let color = if name == "tachyon" {
                palette(0)
            } else {
                RGBColor(120, 130, 150)
            };
            chart.draw_series(std::iter::once(Rectangle::new(
                [(0.0, y - 0.8), (*value, y - 0.2)],
                color.filled(),
            )))?;
            chart.draw_series(std::iter::once(Text::new(
                human(*value),
                (*value, y - 0.5),
                ("sans-serif", 13),
            )))?;
        }
        root.present()?;
    }
    Ok(svg)
}

fn bounds(xs: &[f64]) -> (f64, f64) {
    let lo = xs.iter().cloned().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() || !hi.is_finite() {
        return (0.0, 1.0);
    }
    if (hi - lo).abs() < 1e-9 {
        (lo - 1.0, hi + 1.0)
    } else {
        let pad = (hi - lo) * 0.04;
        (lo - pad, hi + pad)
    }
}

fn palette(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 9] = [
        RGBColor(214, 39, 40),
        RGBColor(80, 80, 80),
        RGBColor(31, 119, 180),
        RGBColor(140, 86, 75),
        RGBColor(44, 160, 44),
        RGBColor(255, 127, 14),
        RGBColor(148, 103, 189),
        RGBColor(23, 190, 207),
        RGBColor(188, 189, 34),
    ];
    COLORS[i % COLORS.len()]
}

/// 1234567 → "1.23M".
pub fn human(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.1}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Renders a chart's SVG to PNG (for viewers and pages that do not show
/// SVG), with the system's fonts; twice the SVG's size for sharp text.
pub fn write_png(svg: &str, path: &std::path::Path) -> anyhow::Result<()> {
    use resvg::{tiny_skia, usvg};
    let mut options = usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_system_fonts();
    // usvg maps the generic `sans-serif` to Arial, which Debian does not
    // ship; point it at a sans face that is installed, else text vanishes.
    let installed: Vec<String> = fonts
        .faces()
        .flat_map(|face| face.families.iter().map(|(name, _)| name.clone()))
        .collect();
    let sans = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "Arial"]
        .iter()
        .map(|name| name.to_string())
        .find(|name| installed.contains(name))
        .or_else(|| installed.first().cloned());
    match sans {
        Some(family) => fonts.set_sans_serif_family(family),
        None => anyhow::bail!("no system fonts found to draw chart text"),
    }
    let tree = usvg::Tree::from_str(svg, &options)?;
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width() * 2, size.height() * 2)
        .ok_or_else(|| anyhow::anyhow!("chart has no area"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(2.0, 2.0),
        &mut pixmap.as_mut(),
    );
    pixmap.save_png(path)?;
    Ok(())
}
