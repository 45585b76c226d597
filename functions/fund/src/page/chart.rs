//! A line chart as inline SVG, with no scripts: one path per curve with a dot
//! per point (each dot's `<title>` is its hover text), y-axis ticks at round
//! steps, four date ticks on the x axis, and a baseline. Pure drawing: the
//! page's sections decide what the curves, their classes and their texts
//! are.

use chrono::DateTime;
use maud::{Markup, html};

const CHART_WIDTH: f64 = 720.0;
const CHART_HEIGHT: f64 = 320.0;
const RIGHT: f64 = 16.0;
/// Room for one character of a y-axis label at the largest font the
/// stylesheet gives axis text (20 px on narrow screens), with a margin: the
/// left margin grows with the longest label, so none is clipped.
const LABEL_CHAR_WIDTH: f64 = 12.5;
const LABEL_GAP: f64 = 14.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

/// Distinct curve colours in the stylesheet (`c0` … `c7`), reused in turn.
pub(crate) const COLOURS: usize = 8;

/// One series to draw.
pub(crate) struct Curve {
    /// CSS classes of its line and dots: its colour and its dash.
    pub class: String,
    /// The strategy it shows, as a `data-strategy` attribute.
    pub strategy_id: String,
    /// `live` or `paper`, as a `data-mode` attribute.
    pub mode: &'static str,
    /// Its points in time order.
    pub points: Vec<Point>,
    /// How many of its first points were logged late (drawn lighter, with
    /// the class `late`): the stretch before it was recorded as it
    /// happened.
    pub late_points: usize,
}

/// One point of a curve.
pub(crate) struct Point {
    /// Seconds since the Unix epoch.
    pub t: i64,
    /// The value drawn (finite).
    pub value: f64,
    /// The hover text of its dot.
    pub title: String,
}

/// What the chart says about itself to assistive technology, and how its
/// y axis reads.
pub(crate) struct Labels<'a> {
    /// A prefix for the chart's element ids, unique on the page.
    pub id: &'a str,
    /// The `<title>` of the whole chart.
    pub title: &'a str,
    /// The `<desc>` of the whole chart (e.g. the latest values).
    pub description: String,
    /// The caption under the x axis.
    pub x_axis: &'a str,
    /// The value the dashed reference line marks (1 for a growth index, 0
    /// for drawdowns); the y axis always includes it.
    pub reference: f64,
    /// Whether the y axis reads in percent (drawdowns) rather than as a
    /// plain number (a growth index).
    pub percent: bool,
}

/// A y-axis label: `v` with the decimals its step needs.
fn y_label(v: f64, decimals: usize, percent: bool) -> String {
    if percent {
        let decimals = decimals.saturating_sub(2);
        let text = format!("{:.decimals$} %", v * 100.0);
        text.replace('-', "−")
    } else {
        format!("{v:.decimals$}")
    }
}

/// The chart of `curves` (at least one point among them), with a dashed
/// line at the reference value.
pub(crate) fn line_chart(curves: &[Curve], labels: &Labels<'_>) -> Markup {
    let all = curves.iter().flat_map(|c| c.points.iter());
    let (mut t_min, mut t_max) = (i64::MAX, i64::MIN);
    let (mut y_min, mut y_max) = (labels.reference, labels.reference);
    for point in all {
        t_min = t_min.min(point.t);
        t_max = t_max.max(point.t);
        y_min = y_min.min(point.value);
        y_max = y_max.max(point.value);
    }
    if t_min == t_max {
        t_min -= 86_400;
        t_max += 86_400;
    }
    let YAxis {
        min: y_min,
        max: y_max,
        step,
        ticks: y_ticks,
    } = y_axis(y_min, y_max);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let y_labels: Vec<String> = y_ticks
        .iter()
        .map(|v| y_label(*v, decimals, labels.percent))
        .collect();
    let longest = y_labels
        .iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(1);
    let left = (longest as f64 * LABEL_CHAR_WIDTH + LABEL_GAP).clamp(40.0, CHART_WIDTH / 3.0);
    let plot_w = CHART_WIDTH - left - RIGHT;
    let plot_h = CHART_HEIGHT - TOP - BOTTOM;
    let x = |t: i64| left + (t - t_min) as f64 / (t_max - t_min) as f64 * plot_w;
    let y = |v: f64| TOP + (y_max - v) / (y_max - y_min) * plot_h;
    let title_id = format!("{}-svg-title", labels.id);
    let desc_id = format!("{}-svg-desc", labels.id);
    let x_ticks = date_ticks(t_min, t_max);
    html! {
        figure class=(if labels.percent { "chart drawdown" } else { "chart growth" }) {
            svg viewBox=(format!("0 0 {CHART_WIDTH} {CHART_HEIGHT}")) role="img" aria-labelledby=(format!("{title_id} {desc_id}")) {
                title #(title_id) { (labels.title) }
                desc #(desc_id) { "Latest values: " (labels.description) }
                g.axis {
                    @for (v, label) in y_ticks.iter().zip(&y_labels) {
                        line.grid x1=(fmt(left)) x2=(CHART_WIDTH - RIGHT) y1=(fmt(y(*v))) y2=(fmt(y(*v))) {}
                        text x=(fmt(left - 6.0)) y=(fmt(y(*v) + 4.0)) text-anchor="end" { (label) }
                    }
                    line.base x1=(fmt(left)) x2=(CHART_WIDTH - RIGHT) y1=(fmt(y(labels.reference))) y2=(fmt(y(labels.reference))) {}
                    line x1=(fmt(left)) x2=(fmt(left)) y1=(TOP) y2=(CHART_HEIGHT - BOTTOM) {}
                    line x1=(fmt(left)) x2=(CHART_WIDTH - RIGHT) y1=(CHART_HEIGHT - BOTTOM) y2=(CHART_HEIGHT - BOTTOM) {}
                    @for (i, (t, label)) in x_ticks.iter().enumerate() {
                        @let anchor = if i == 0 { "start" } else if i + 1 == x_ticks.len() { "end" } else { "middle" };
                        text x=(fmt(x(*t))) y=(CHART_HEIGHT - BOTTOM + 18.0) text-anchor=(anchor) { (label) }
                    }
                    text x=(fmt(left + plot_w / 2.0)) y=(CHART_HEIGHT - 4.0) text-anchor="middle" { (labels.x_axis) }
                }
                @for curve in curves {
                    @let late = curve.late_points.min(curve.points.len());
                    g data-strategy=(curve.strategy_id) data-mode=(curve.mode) {
                        @if late > 0 {
                            path class=(format!("curve late {}", curve.class)) d=(path(&curve.points[..late], &x, &y)) {}
                        }
                        // The recorded stretch joins the late one's last point.
                        path class=(format!("curve {}", curve.class)) d=(path(&curve.points[late.saturating_sub(1)..], &x, &y)) {}
                        @for (i, point) in curve.points.iter().enumerate() {
                            circle class=(format!("dot {}{}", curve.class, if i < late { " late" } else { "" })) cx=(fmt(x(point.t))) cy=(fmt(y(point.value))) r="3" {
                                title { (point.title) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Most horizontal grid lines the chart draws.
const MAX_Y_TICKS: usize = 12;

/// The chart's y axis.
struct YAxis {
    min: f64,
    max: f64,
    step: f64,
    /// Grid values from `min` up to `max`, at most [`MAX_Y_TICKS`] + 1.
    ticks: Vec<f64>,
}

/// The y axis for values between `low` and `high` (finite): bounds
/// rounded out to a step that reads well, spanning at least two steps. Every
/// value is finite however extreme the input: the step grows with the
/// magnitude (so it is never below a double's resolution), and a bound that
/// rounding would push past `f64::MAX` stays exact.
fn y_axis(low: f64, high: f64) -> YAxis {
    let spread = (high - low).max(0.004).max(high.abs() * 1e-6);
    let step = nice_step(spread / 4.0);
    let rounded =
        |v: f64, round: fn(f64) -> f64| Some(round(v / step) * step).filter(|r| r.is_finite());
    let max = rounded(high, f64::ceil).unwrap_or(high);
    let min = rounded(low, f64::floor).unwrap_or(low);
    let min = min.min(max - step * 2.0);
    let count = (((max - min) / step) + 1e-9).floor();
    let count = if count.is_finite() {
        (count as usize).min(MAX_Y_TICKS)
    } else {
        0
    };
    let ticks = (0..=count)
        .map(|i| min + step * i as f64)
        .filter(|v| v.is_finite() && *v <= max)
        .collect();
    YAxis {
        min,
        max,
        step,
        ticks,
    }
}

/// Four date ticks evenly spread from `t_min` to `t_max` (seconds), each
/// with its UTC date; a middle tick whose date another tick already shows
/// (a window of a few days) is left out, so no date is written twice.
fn date_ticks(t_min: i64, t_max: i64) -> Vec<(i64, String)> {
    let span = t_max.saturating_sub(t_min);
    let label = |t: i64| {
        DateTime::from_timestamp(t, 0)
            .map(|d| d.format("%Y-%m-%d").to_string())
            .unwrap_or_default()
    };
    let ticks: Vec<(i64, String)> = (0..=3)
        .map(|i| {
            let t = t_min.saturating_add(span / 3 * i + span % 3 * i / 3);
            (t, label(t))
        })
        .collect();
    let last = ticks.last().map(|(_, l)| l.clone()).unwrap_or_default();
    let mut kept: Vec<(i64, String)> = Vec::with_capacity(4);
    for (i, tick) in ticks.into_iter().enumerate() {
        let shown_before = kept.last().is_some_and(|(_, l)| *l == tick.1);
        // A middle tick also gives way to the last one's date.
        let repeated = shown_before || (i < 3 && i > 0 && tick.1 == last);
        if !repeated {
            kept.push(tick);
        }
    }
    kept
}

/// The 1, 2 or 5 times a power of ten nearest above `raw`: a tick step
/// that reads well.
fn nice_step(raw: f64) -> f64 {
    let magnitude = 10f64.powf(raw.log10().floor());
    let fraction = raw / magnitude;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * magnitude
}

/// A coordinate as SVG reads it: one decimal.
fn fmt(v: f64) -> String {
    format!("{v:.1}")
}

fn path(points: &[Point], x: &dyn Fn(i64) -> f64, y: &dyn Fn(f64) -> f64) -> String {
    let mut d = String::new();
    for (i, point) in points.iter().enumerate() {
        let command = if i == 0 { 'M' } else { 'L' };
        d.push_str(&format!(
            "{command}{} {} ",
            fmt(x(point.t)),
            fmt(y(point.value))
        ));
    }
    if points.len() == 1 {
        // A single point still draws a visible mark.
        d.push_str("h0.01");
    }
    d.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_ticks_never_write_a_date_twice() {
        let day = 86_400;
        let at = |d: i64, h: i64| 1_780_000_000 / day * day + d * day + h * 3_600;
        let labels = |from, to| -> Vec<String> {
            date_ticks(from, to).into_iter().map(|(_, l)| l).collect()
        };
        // Two days and a bit: 4 evenly spread ticks would show the last date twice.
        let short = labels(at(0, 20), at(2, 20));
        assert_eq!(short.len(), 3, "{short:?}");
        let mut unique = short.clone();
        unique.dedup();
        assert_eq!(unique, short);
        // One day: one date.
        assert_eq!(labels(at(0, 1), at(0, 20)).len(), 1);
        assert_eq!(labels(at(0, 1), at(0, 1)).len(), 1);
        // A quarter: four distinct dates, first and last at the ends.
        let long = date_ticks(at(0, 20), at(90, 20));
        assert_eq!(long.len(), 4);
        assert_eq!((long[0].0, long[3].0), (at(0, 20), at(90, 20)));
        // Extremes do not overflow.
        assert!(!date_ticks(i64::MIN, i64::MAX).is_empty());
    }

    #[test]
    fn the_y_axis_is_finite_and_small_for_any_finite_index_range() {
        for (low, high) in [
            (1.0, 1.0),
            (0.0, f64::MAX),
            (1.7e308, f64::MAX),
            (0.0, 1e-300),
            (0.999, 1.001),
            (1e-300, 1e300),
        ] {
            let axis = y_axis(low, high);
            let (min, max, step) = (axis.min, axis.max, axis.step);
            assert!(min.is_finite() && max.is_finite() && step.is_finite() && step > 0.0);
            assert!(min <= low && max >= high, "{low} {high}: {min} {max}");
            // At least two steps (up to rounding near f64::MAX).
            assert!(
                max - min >= 2.0 * step * (1.0 - 1e-9),
                "{low} {high}: {min} {max} {step}"
            );
            assert!(
                (2..=MAX_Y_TICKS + 1).contains(&axis.ticks.len()),
                "{low} {high}: {} ticks",
                axis.ticks.len()
            );
            assert!(
                axis.ticks
                    .iter()
                    .all(|t| t.is_finite() && *t >= min && *t <= max)
            );
        }
    }
}
