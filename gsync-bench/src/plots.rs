//! Line charts as SVG and PNG, drawn with plotters. Text in the PNGs uses a
//! font embedded in the binary (DejaVu Sans), so no system font is needed.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::error::{BenchError, Result};

/// DejaVu Sans (license in `assets/DejaVuSans-LICENSE.txt`).
const FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

/// The family name every text style here uses.
const FAMILY: &str = "sans-serif";

/// Pixels of every chart.
const SIZE: (u32, u32) = (1000, 600);

/// How a series is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// A solid line with a dot per point and a bar from min to max.
    Line,
    /// A dashed line (reference values, e.g. the paper's).
    Dashed,
    /// Triangles only (single reference points).
    Points,
}

/// A measured or reference value; `low`–`high` is drawn as a bar.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Horizontal position.
    pub x: f64,
    /// The value (a median).
    pub y: f64,
    /// The bar's low end (e.g. the minimum).
    pub low: Option<f64>,
    /// The bar's high end (e.g. the maximum).
    pub high: Option<f64>,
}

impl Point {
    /// A point without a bar.
    pub fn at(x: f64, y: f64) -> Point {
        Point { x, y, low: None, high: None }
    }
}

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// The legend's text.
    pub name: String,
    /// Its colour.
    pub color: (u8, u8, u8),
    /// How it is drawn.
    pub style: Style,
    /// Its points, by x.
    pub points: Vec<Point>,
}

/// A right-hand axis with its own scale (e.g. the paper's numbers, in the paper's units).
#[derive(Clone, Debug, PartialEq)]
pub struct SecondaryAxis {
    /// The axis title.
    pub label: String,
    /// The series drawn against it.
    pub series: Vec<Series>,
}

/// A labelled vertical line.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    /// Where.
    pub x: f64,
    /// What it marks.
    pub label: String,
}

/// A line chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Chart {
    /// The caption.
    pub title: String,
    /// The horizontal axis title.
    pub x_label: String,
    /// The vertical axis title.
    pub y_label: String,
    /// A logarithmic horizontal axis (base 2).
    pub log_x: bool,
    /// The series against the left axis.
    pub series: Vec<Series>,
    /// Series against a right axis.
    pub secondary: Option<SecondaryAxis>,
    /// Vertical lines.
    pub markers: Vec<Marker>,
}

impl Chart {
    /// An empty chart with these titles.
    pub fn new(title: impl Into<String>, x_label: impl Into<String>, y_label: impl Into<String>) -> Chart {
        Chart {
            title: title.into(),
            x_label: x_label.into(),
            y_label: y_label.into(),
            log_x: false,
            series: Vec::new(),
            secondary: None,
            markers: Vec::new(),
        }
    }

    /// Whether any series has a point.
    pub fn has_data(&self) -> bool {
        self.series.iter().any(|s| !s.points.is_empty())
    }
}

/// Writes `chart` as `dir/stem.svg` and `dir/stem.png`; returns both paths.
pub fn write(dir: &Path, stem: &str, chart: &Chart) -> Result<[PathBuf; 2]> {
    register_font(stem)?;
    let plot_error = |name: &str| {
        let name = name.to_owned();
        move |problem: String| BenchError::Plot { name, problem }
    };
    let svg_path = dir.join(format!("{stem}.svg"));
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        draw(&area, chart).map_err(|e| e.to_string()).map_err(plot_error(&format!("{stem}.svg")))?;
        area.present().map_err(|e| e.to_string()).map_err(plot_error(&format!("{stem}.svg")))?;
    }
    std::fs::write(&svg_path, svg).map_err(BenchError::io(&svg_path))?;

    let png_path = dir.join(format!("{stem}.png"));
    let mut pixels = vec![0u8; (SIZE.0 * SIZE.1 * 3) as usize];
    {
        let area = BitMapBackend::with_buffer(&mut pixels, SIZE).into_drawing_area();
        draw(&area, chart).map_err(|e| e.to_string()).map_err(plot_error(&format!("{stem}.png")))?;
        area.present().map_err(|e| e.to_string()).map_err(plot_error(&format!("{stem}.png")))?;
    }
    let png = encode_png(&pixels, SIZE).map_err(plot_error(&format!("{stem}.png")))?;
    std::fs::write(&png_path, png).map_err(BenchError::io(&png_path))?;
    Ok([svg_path, png_path])
}

/// Registers the embedded font once per process.
fn register_font(stem: &str) -> Result<()> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok());
    if ok {
        Ok(())
    } else {
        Err(BenchError::Plot { name: stem.to_owned(), problem: "the embedded font could not be loaded".into() })
    }
}

/// RGB pixels as a PNG file.
fn encode_png(pixels: &[u8], (width, height): (u32, u32)) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(|e| e.to_string())?;
    writer.write_image_data(pixels).map_err(|e| e.to_string())?;
    writer.finish().map_err(|e| e.to_string())?;
    Ok(out)
}

/// The smallest and largest of some values, padded; (0, 1) when there are none.
fn span(values: impl Iterator<Item = f64>, pad: f64) -> (f64, f64) {
    let (low, high) = values.filter(|v| v.is_finite()).fold((f64::MAX, f64::MIN), |(l, h), v| (l.min(v), h.max(v)));
    if low > high {
        return (0.0, 1.0);
    }
    let width = if high > low { high - low } else { high.abs().max(1.0) };
    (low - pad * width, high + pad * width)
}

/// Every value a series reaches, bars included.
fn reach(series: &[Series]) -> impl Iterator<Item = f64> + '_ {
    series.iter().flat_map(|s| s.points.iter()).flat_map(|p| [Some(p.y), p.low, p.high]).flatten()
}

/// Draws one series on the primary or the secondary axes.
macro_rules! draw_series_on {
    ($ctx:expr, $method:ident, $series:expr, $tx:expr) => {{
        let s: &Series = $series;
        let color = RGBColor(s.color.0, s.color.1, s.color.2);
        let points: Vec<(f64, f64)> = s.points.iter().map(|p| ($tx(p.x), p.y)).collect();
        let name = s.name.clone();
        match s.style {
            Style::Line => {
                $ctx.$method(LineSeries::new(points.clone(), color.stroke_width(2)))?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
                $ctx.$method(points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
            }
            Style::Dashed => {
                $ctx.$method(DashedLineSeries::new(points.clone(), 8, 5, color.stroke_width(2)))?
                    .label(name)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 8, y)], color.stroke_width(2)));
            }
            Style::Points => {
                $ctx.$method(points.iter().map(|&p| TriangleMarker::new(p, 8, color.filled())))?
                    .label(name)
                    .legend(move |(x, y)| TriangleMarker::new((x + 10, y), 6, color.filled()));
            }
        }
        let bars = s.points.iter().filter_map(|p| {
            let x = $tx(p.x);
            Some(PathElement::new(vec![(x, p.low?), (x, p.high?)], color.stroke_width(1)))
        });
        $ctx.$method(bars)?;
    }};
}

/// Draws `chart` onto `area`.
fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    chart: &Chart,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    area.fill(&WHITE)?;
    let log_x = chart.log_x;
    let tx = move |x: f64| if log_x { x.max(f64::MIN_POSITIVE).log2() } else { x };
    let secondary: &[Series] = chart.secondary.as_ref().map_or(&[], |s| &s.series);
    let xs = chart.series.iter().chain(secondary).flat_map(|s| s.points.iter().map(|p| tx(p.x)));
    let (x0, x1) = span(xs.chain(chart.markers.iter().map(|m| tx(m.x))), 0.03);
    let top = |series: &[Series]| span(reach(series), 0.0).1.max(f64::MIN_POSITIVE) * 1.12;
    let (y1, y2) = (top(&chart.series), top(secondary));

    let mut builder = ChartBuilder::on(area);
    builder
        .caption(&chart.title, (FAMILY, 22))
        .margin(14)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .right_y_label_area_size(if chart.secondary.is_some() { 72 } else { 14 });
    let mut ctx = builder.build_cartesian_2d(x0..x1, 0f64..y1)?.set_secondary_coord(x0..x1, 0f64..y2);
    let x_format = move |v: &f64| if log_x { format!("{:.0}", v.exp2()) } else { format!("{v:.0}") };
    let y_format = |v: &f64| trim_number(*v);
    ctx.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .light_line_style(RGBColor(238, 238, 238))
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 16))
        .draw()?;
    if let Some(axis) = &chart.secondary {
        ctx.configure_secondary_axes()
            .y_desc(axis.label.as_str())
            .y_label_formatter(&y_format)
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 16))
            .draw()?;
    }
    for marker in &chart.markers {
        let x = tx(marker.x);
        let grey = RGBColor(90, 90, 90);
        let line =
            plotters::element::DashedPathElement::new(vec![(x, 0.0), (x, y1 / 1.12)], 6, 4, grey.stroke_width(2));
        ctx.draw_series(std::iter::once(line))?;
        let text = Text::new(marker.label.clone(), (x, y1 / 1.06), (FAMILY, 13).into_font().color(&grey));
        ctx.draw_series(std::iter::once(text))?;
    }
    for series in &chart.series {
        draw_series_on!(ctx, draw_series, series, tx);
    }
    for series in secondary {
        draw_series_on!(ctx, draw_secondary_series, series, tx);
    }
    if !chart.has_data() {
        let text = Text::new("no data", ((x0 + x1) / 2.0, y1 / 2.0), (FAMILY, 20).into_font());
        ctx.draw_series(std::iter::once(text))?;
    }
    ctx.configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(180, 180, 180))
        .label_font((FAMILY, 13))
        .draw()?;
    Ok(())
}

/// An axis number without needless digits: 0, 2.5, 120, 0.05.
fn trim_number(v: f64) -> String {
    let text = if v.abs() >= 100.0 { format!("{v:.0}") } else { format!("{v:.2}") };
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        text
    }
}

/// Colours by barrier name, the same in every chart.
pub fn barrier_color(label: &str) -> (u8, u8, u8) {
    match label {
        "cooperative" => (30, 30, 30),
        "lbs" => (214, 39, 40),
        "ilbs:6" => (31, 119, 180),
        "ilbs:√N" | "ilbs" => (23, 190, 207),
        "lfs" => (44, 160, 44),
        "ulfs" => (255, 127, 14),
        "multi-launch" => (148, 103, 189),
        "relay" => (227, 119, 194),
        _ => (127, 127, 127),
    }
}

/// The colour of the paper's reference values.
pub const PAPER_COLOR: (u8, u8, u8) = (120, 120, 120);

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Chart {
        let mut chart = Chart::new("Figure 7 — test: time vs blocks", "blocks (N)", "kernel time (µs)");
        for (name, scale) in [("lbs", 1.0), ("ilbs:6", 0.7)] {
            let points = (7..=12)
                .map(|n| {
                    let y = scale * f64::from(n);
                    Point { x: f64::from(n), y, low: Some(y * 0.95), high: Some(y * 1.05) }
                })
                .collect();
            chart.series.push(Series { name: name.into(), color: barrier_color(name), style: Style::Line, points });
        }
        chart.secondary = Some(SecondaryAxis {
            label: "paper (its units)".into(),
            series: vec![Series {
                name: "paper: t_LBS".into(),
                color: PAPER_COLOR,
                style: Style::Dashed,
                points: vec![Point::at(7.0, 38.11), Point::at(12.0, 38.11)],
            }],
        });
        chart.markers.push(Marker { x: 9.0, label: "√N".into() });
        chart
    }

    #[test]
    fn charts_are_written_as_non_empty_svg_and_png() {
        let dir = std::env::temp_dir().join(format!("gsync-bench-plots-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let mut log = sample();
        log.log_x = true;
        for (stem, chart) in [("linear", sample()), ("log", log), ("empty", Chart::new("nothing", "x", "y"))] {
            let [svg, png] = write(&dir, stem, &chart).expect("drawn");
            let svg_text = std::fs::read_to_string(&svg).expect("svg");
            assert!(svg_text.starts_with("<svg") && svg_text.len() > 1000, "{stem}: {}", svg_text.len());
            let png_bytes = std::fs::read(&png).expect("png");
            assert_eq!(&png_bytes[..8], b"\x89PNG\r\n\x1a\n", "{stem}");
            assert!(png_bytes.len() > 2000, "{stem}: {} bytes", png_bytes.len());
        }
        let svg_text = std::fs::read_to_string(dir.join("linear.svg")).expect("svg");
        assert!(svg_text.contains("ilbs:6") && svg_text.contains("paper: t_LBS"), "legends are drawn");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn spans_pad_and_survive_missing_values() {
        assert_eq!(span([1.0, 3.0].into_iter(), 0.5), (0.0, 4.0));
        assert_eq!(span(std::iter::empty(), 0.1), (0.0, 1.0));
        assert_eq!(span([2.0].into_iter(), 0.0), (2.0, 2.0));
        assert_eq!(trim_number(2.50), "2.5");
        assert_eq!(trim_number(120.0), "120");
        assert_eq!(trim_number(0.0), "0");
    }
}
