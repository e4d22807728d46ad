//! docs/benchmarks-throughput.svg, drawn with plotters' SVG backend: one panel per direction
//! (H2D, D2H, D2D), throughput against size on a log2 axis, one line per allocation policy, plus
//! the safe API and the host memcpy baseline on the H2D panel. Text is written as SVG `<text>`
//! elements (plotters without its `ttf` feature), so drawing needs no font files.

use super::human;
use super::results::{POLICIES, Results, measured_policies, points};
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::ops::Range;

/// The policies' colours, by position in [`POLICIES`].
const COLORS: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];
/// One panel's size in pixels, legend excluded.
const PANEL: (u32, u32) = (480, 380);
/// The height of one legend line.
const LEGEND_LINE: u32 = 20;
/// The font family every text names (the viewer picks the font).
const FONT: &str = "sans-serif";

/// One line of a panel.
struct Series {
    name: String,
    color: RGBColor,
    /// Dash and gap lengths in pixels; a solid line when `None`.
    dash: Option<(u32, u32)>,
    /// (bytes, GB/s), by size.
    points: Vec<(u64, f64)>,
}

/// Sizes in bytes on a log2 axis, between two powers of two: bold ticks (with labels) every 16×
/// (4 B, 64 B, 1 KiB, ...), light ones at every power of two.
struct Log2Bytes {
    /// The exponents of the ends.
    exponents: Range<u32>,
}

impl Log2Bytes {
    /// The smallest axis that holds every size of `sizes` (4 B … 256 MiB when there is none).
    fn covering(sizes: impl Iterator<Item = u64> + Clone) -> Log2Bytes {
        let min = sizes.clone().min().unwrap_or(4).max(1);
        let max = sizes.max().unwrap_or(1 << 28).max(2);
        let lo = min.ilog2();
        let hi = max.next_power_of_two().ilog2().max(lo + 1);
        Log2Bytes { exponents: lo..hi }
    }
}

impl Ranged for Log2Bytes {
    type FormatOption = NoDefaultFormatting;
    type ValueType = u64;

    fn map(&self, value: &u64, limit: (i32, i32)) -> i32 {
        let (lo, hi) = (
            f64::from(self.exponents.start),
            f64::from(self.exponents.end),
        );
        let t = ((*value).max(1) as f64).log2().clamp(lo, hi);
        limit.0 + ((t - lo) / (hi - lo) * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<u64> {
        let light = hint.weight().allow_light_points();
        (self.exponents.start..=self.exponents.end)
            .filter(|e| light || e % 4 == 0 || *e == self.exponents.start)
            .map(|e| 1u64 << e)
            .collect()
    }

    fn range(&self) -> Range<u64> {
        (1u64 << self.exponents.start)..(1u64 << self.exponents.end)
    }
}

impl ValueFormatter<u64> for Log2Bytes {
    fn format(value: &u64) -> String {
        human(*value)
    }
}

/// The plot as SVG text.
pub(super) fn throughput(results: &Results) -> Result<String, String> {
    let panels = panels(results);
    let mut svg = String::new();
    draw(&mut svg, &panels).map_err(|e| format!("drawing the plot: {e}"))?;
    Ok(svg)
}

/// The panels' titles and lines; a line without points is left out.
fn panels(results: &Results) -> Vec<(String, Vec<Series>)> {
    let policies = measured_policies(results);
    ["h2d", "d2h", "d2d"]
        .into_iter()
        .map(|dir| {
            let group = format!("memcpy_{dir}_sync");
            let mut series: Vec<Series> = policies
                .iter()
                .enumerate()
                .map(|(i, p)| Series {
                    name: format!("policy {p}"),
                    color: COLORS[POLICIES.iter().position(|q| q == p).unwrap_or(i) % COLORS.len()],
                    dash: None,
                    points: points(results, &group, &format!("policy/{p}")),
                })
                .collect();
            if dir == "h2d" {
                series.push(Series {
                    name: "safe API (huge_first)".to_string(),
                    color: RGBColor(0x44, 0x44, 0x44),
                    dash: Some((2, 3)),
                    points: points(results, &group, "safe"),
                });
                series.push(Series {
                    name: "host memcpy".to_string(),
                    color: BLACK,
                    dash: Some((7, 4)),
                    points: points(results, &group, "host_memcpy"),
                });
            }
            series.retain(|s| !s.points.is_empty());
            (format!("{} (sync)", dir.to_uppercase()), series)
        })
        .collect()
}

/// Draws `panels` side by side into `svg`, each with its legend below it, under a title.
fn draw(
    svg: &mut String,
    panels: &[(String, Vec<Series>)],
) -> Result<(), Box<dyn std::error::Error>> {
    let all = panels
        .iter()
        .flat_map(|(_, s)| s.iter().flat_map(|s| s.points.iter().copied()));
    let ymax = all.clone().map(|p| p.1).fold(0.0, f64::max).max(1e-3) * 1.05;
    let lines = panels.iter().map(|(_, s)| s.len()).max().unwrap_or(0) as u32;
    let title_h = 34;
    let size = (
        PANEL.0 * panels.len().max(1) as u32,
        title_h + PANEL.1 + LEGEND_LINE * lines + 16,
    );

    let root = SVGBackend::with_string(svg, size).into_drawing_area();
    root.fill(&WHITE)?;
    let root = root.titled(
        "Copy throughput (GB/s) against size — one line per allocation policy",
        (FONT, 20).into_font().style(FontStyle::Bold),
    )?;
    for (i, (area, (title, series))) in root
        .split_evenly((1, panels.len().max(1)))
        .iter()
        .zip(panels)
        .enumerate()
    {
        let (chart_area, legend) = area.split_vertically(PANEL.1);
        let mut chart = ChartBuilder::on(&chart_area)
            .caption(title, (FONT, 17).into_font().style(FontStyle::Bold))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(if i == 0 { 56 } else { 40 })
            .build_cartesian_2d(Log2Bytes::covering(all.clone().map(|p| p.0)), 0.0..ymax)?;
        let mut mesh = chart.configure_mesh();
        mesh.x_desc("bytes per copy (log scale)")
            .y_label_formatter(&|g| format!("{g}"))
            .label_style((FONT, 14))
            .axis_desc_style((FONT, 14))
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0));
        if i == 0 {
            mesh.y_desc("GB/s");
        }
        mesh.draw()?;
        for s in series {
            let style = s.color.stroke_width(2);
            let xy = s.points.iter().copied();
            if let Some((dash, gap)) = s.dash {
                chart.draw_series(DashedLineSeries::new(xy.clone(), dash, gap, style))?;
            } else {
                chart.draw_series(LineSeries::new(xy.clone(), style))?;
            }
            chart.draw_series(xy.map(|p| Circle::new(p, 3, s.color.filled())))?;
        }
        draw_legend(&legend, series)?;
    }
    root.present()?;
    Ok(())
}

/// One line per series under a panel: a stroke in its style and its name.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    series: &[Series],
) -> Result<(), Box<dyn std::error::Error>>
where
    DB::ErrorType: 'static,
{
    for (k, s) in series.iter().enumerate() {
        let y = 8 + (k as u32 * LEGEND_LINE) as i32;
        let (x0, x1) = (64, 92);
        let style = s.color.stroke_width(2);
        if let Some((dash, gap)) = s.dash {
            area.draw(&DashedPathElement::new(
                vec![(x0, y), (x1, y)],
                dash,
                gap,
                style,
            ))?;
        } else {
            area.draw(&PathElement::new(vec![(x0, y), (x1, y)], style))?;
        }
        area.draw(&Text::new(
            s.name.clone(),
            (x1 + 6, y),
            TextStyle::from((FONT, 15).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::results::Estimate;

    fn results(ids: &[(&str, &str, u64, f64)]) -> Results {
        ids.iter()
            .map(|&(group, function, bytes, ns)| {
                let e = Estimate {
                    group: group.to_string(),
                    function: function.to_string(),
                    bytes,
                    ns,
                    lo: ns,
                    hi: ns,
                };
                ((e.group.clone(), e.function.clone(), bytes), e)
            })
            .collect()
    }

    #[test]
    fn a_panel_per_direction_and_a_legend_line_per_measured_series() {
        let r = results(&[
            ("memcpy_h2d_sync", "policy/huge_first", 4, 20.0),
            ("memcpy_h2d_sync", "policy/huge_first", 65536, 500.0),
            ("memcpy_h2d_sync", "safe", 4, 21.0),
            ("memcpy_h2d_sync", "host_memcpy", 4, 2.0),
            ("memcpy_d2h_sync", "policy/huge_first", 4, 20.0),
        ]);
        let svg = throughput(&r).unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        for text in [
            "H2D (sync)",
            "D2H (sync)",
            "D2D (sync)",
            "policy huge_first",
            "safe API (huge_first)",
            "host memcpy",
            "bytes per copy (log scale)",
            "GB/s",
            "64 KiB",
        ] {
            assert!(svg.contains(text), "{text} missing");
        }
        // No result, no legend line.
        assert!(!svg.contains("policy normal_only"));
        // The drawing needs no font: plotters wrote the text as SVG text.
        assert!(svg.contains("<text") && svg.contains("font-family=\"sans-serif\""));
        // Nothing measured still draws the empty panels.
        assert!(throughput(&Results::new()).unwrap().contains("D2D (sync)"));
    }

    #[test]
    fn the_size_axis_is_log2_with_ticks_every_sixteen_times() {
        let axis = Log2Bytes::covering([4u64, 3 << 20].into_iter());
        assert_eq!(axis.exponents, 2..22);
        assert_eq!(axis.range(), 4..(4 << 20));
        let bold = axis.key_points(plotters::coord::ranged1d::BoldPoints(10));
        assert_eq!(bold, [4, 16, 256, 4096, 65536, 1 << 20]);
        assert_eq!(axis.key_points(100usize).len(), 21);
        assert_eq!(
            (axis.map(&4, (0, 200)), axis.map(&(4 << 20), (0, 200))),
            (0, 200)
        );
        assert_eq!(axis.map(&4096, (0, 200)), 100);
        assert_eq!(Log2Bytes::format(&65536), "64 KiB");
    }
}
