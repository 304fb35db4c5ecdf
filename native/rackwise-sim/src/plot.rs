//! Charts as SVG, drawn with `plotters`. SVG keeps text as `<text>` elements for the viewer to
//! render, so building needs no system font library; every chart has a title, axes with units
//! and a legend.

use crate::metrics::{Collector, PolicyMetrics};
use crate::sweep::{format_load, PolicySummary, Summary, SUSTAINABLE_P95_GROWTH};
use crate::workload::{JobSpec, ShuffleClass};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::collections::BTreeMap;
use std::path::Path;

const SIZE: (u32, u32) = (900, 560);
const GIB: f64 = (1u64 << 30) as f64;

/// The colour of the i-th policy, in the order the policies were given.
fn colour(i: usize) -> RGBColor {
    let (r, g, b) = Palette99::pick(i).to_rgba().rgb();
    RGBColor(r, g, b)
}

fn drawing_error(path: &Path, e: impl std::fmt::Display) -> String {
    format!("chart {}: {e}", path.display())
}

/// Creates `dir` and runs `draw` on a blank SVG canvas written to `dir/name`.
fn chart(
    dir: &str,
    name: &str,
    draw: impl FnOnce(&DrawingArea<SVGBackend, Shift>) -> Result<(), String>,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let path = Path::new(dir).join(name);
    let root = SVGBackend::new(&path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(|e| drawing_error(&path, e))?;
    draw(&root).map_err(|e| drawing_error(&path, e))?;
    root.present().map_err(|e| drawing_error(&path, e))
}

fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
        .map_err(|e| e.to_string())
}

/// `compare --plot DIR`: throughput.svg (a bar per policy), cdf-<class>.svg (the turnaround
/// CDF per policy and shuffle class, log time axis) and cross-rack.svg (cross-rack GiB per
/// simulated minute per policy).
pub fn write_all(
    dir: &str,
    metrics: &BTreeMap<String, PolicyMetrics>,
    collectors: &[(String, Collector)],
    jobs: &[JobSpec],
) -> Result<(), String> {
    chart(dir, "throughput.svg", |root| {
        let values: Vec<f64> = collectors
            .iter()
            .map(|(n, _)| metrics[n].throughput_jobs_per_hour)
            .collect();
        let top = values.iter().copied().fold(1.0, f64::max);
        // `0..=last` as segments: one slot per policy.
        let last = collectors.len().saturating_sub(1);
        let mut c = ChartBuilder::on(root)
            .caption("Steady-state throughput per policy", ("sans-serif", 22))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d((0..last).into_segmented(), 0.0..top * 1.1)
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .disable_x_mesh()
            .x_desc("policy")
            .y_desc("jobs per hour")
            .x_label_formatter(&|x| match x {
                SegmentValue::CenterOf(i) => collectors.get(*i).map_or(String::new(), |(n, _)| {
                    format!("{n}: {:.1} jobs/h", metrics[n].throughput_jobs_per_hour)
                }),
                _ => String::new(),
            })
            .draw()
            .map_err(|e| e.to_string())?;
        c.draw_series(
            Histogram::vertical(&c)
                .margin(40)
                .style_func(|x, _| match x {
                    SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => colour(*i).filled(),
                    SegmentValue::Last => BLACK.filled(),
                })
                .data(values.iter().enumerate().map(|(i, v)| (i, *v))),
        )
        .map_err(|e| e.to_string())?;
        Ok(())
    })?;

    for class in ShuffleClass::ALL {
        let curves: Vec<Vec<f64>> = collectors
            .iter()
            .map(|(_, c)| {
                let mut v: Vec<f64> = c
                    .turnarounds(jobs)
                    .into_iter()
                    .filter(|(k, _)| *k == class)
                    .map(|(_, t)| t.max(1.0))
                    .collect();
                v.sort_by(f64::total_cmp);
                v
            })
            .collect();
        // Turnarounds span seconds to days: a log time axis.
        let max = curves
            .iter()
            .filter_map(|v| v.last())
            .fold(10.0f64, |a, b| a.max(*b));
        chart(dir, &format!("cdf-{}.svg", class.name()), |root| {
            let mut c = ChartBuilder::on(root)
                .caption(
                    format!("Turnaround CDF, {} jobs", class.name()),
                    ("sans-serif", 22),
                )
                .margin(15)
                .x_label_area_size(40)
                .y_label_area_size(60)
                .build_cartesian_2d((1.0..max * 1.1).log_scale(), 0.0..1.0)
                .map_err(|e| e.to_string())?;
            c.configure_mesh()
                .x_desc("turnaround (s, log scale)")
                .y_desc("fraction of jobs")
                .draw()
                .map_err(|e| e.to_string())?;
            for (i, ((name, _), v)) in collectors.iter().zip(&curves).enumerate() {
                let n = v.len() as f64;
                c.draw_series(LineSeries::new(
                    v.iter().enumerate().map(|(k, t)| (*t, (k + 1) as f64 / n)),
                    colour(i).stroke_width(2),
                ))
                .map_err(|e| e.to_string())?
                .label(format!("{name} ({} jobs)", v.len()))
                .legend(move |(x, y)| {
                    PathElement::new([(x, y), (x + 20, y)], colour(i).stroke_width(2))
                });
            }
            legend(&mut c)
        })?;
    }

    let minutes = collectors
        .iter()
        .map(|(_, c)| c.timeline.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let peak = collectors
        .iter()
        .flat_map(|(_, c)| c.timeline.iter().map(|(a, b, d)| (a + b + d) / GIB))
        .fold(0.001f64, f64::max);
    chart(dir, "cross-rack.svg", |root| {
        let mut c = ChartBuilder::on(root)
            .caption(
                "Cross-rack traffic (shuffle, remote map reads, output replication)",
                ("sans-serif", 22),
            )
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..minutes as f64, 0.0..peak * 1.1)
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .x_desc("simulated time (min)")
            .y_desc("cross-rack GiB per minute")
            .draw()
            .map_err(|e| e.to_string())?;
        for (i, (name, collector)) in collectors.iter().enumerate() {
            c.draw_series(LineSeries::new(
                collector
                    .timeline
                    .iter()
                    .enumerate()
                    .map(|(m, (a, b, d))| (m as f64, (a + b + d) / GIB)),
                colour(i),
            ))
            .map_err(|e| e.to_string())?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new([(x, y), (x + 20, y)], colour(i).stroke_width(2))
            });
        }
        legend(&mut c)
    })
}

/// `sweep --plot DIR`: sweep-throughput.svg and sweep-p95.svg, one line per policy against the
/// offered load, each point the seed mean with a min–max error bar; `conditions` (what was
/// run) is the line under each title.
pub fn write_sweep(dir: &str, summary: &Summary, conditions: &str) -> Result<(), String> {
    sweep_chart(
        dir,
        "sweep-throughput.svg",
        "Steady-state throughput vs offered load (mean, min–max over seeds)",
        conditions,
        "steady throughput (jobs per hour)",
        "throughput_jobs_per_hour",
        summary,
    )?;
    sweep_chart(
        dir,
        "sweep-p95.svg",
        "p95 turnaround vs offered load (mean, min–max over seeds)",
        conditions,
        "p95 turnaround (s)",
        "p95_turnaround_s",
        summary,
    )
}

/// A policy's legend entry: its maximum sustainable load at its own limit, and at the limit
/// common to every policy where the sweep has one (a baseline ran).
fn sustainable_label(p: &PolicySummary, has_common_limit: bool) -> String {
    let load =
        |x: Option<f64>| x.map_or_else(|| "none".to_string(), |x| format!("×{}", format_load(x)));
    if has_common_limit {
        format!(
            "{} (max sustainable {} own limit, {} common)",
            p.policy,
            load(p.max_sustainable_load),
            load(p.max_sustainable_load_common_limit)
        )
    } else {
        format!(
            "{} (max sustainable {})",
            p.policy,
            load(p.max_sustainable_load)
        )
    }
}

fn sweep_chart(
    dir: &str,
    name: &str,
    title: &str,
    conditions: &str,
    y_desc: &str,
    metric: &str,
    summary: &Summary,
) -> Result<(), String> {
    let points = || {
        summary
            .policies
            .iter()
            .flat_map(|p| p.loads.iter().map(|l| (l.load, l.metrics[metric])))
    };
    let max_load = points().map(|(x, _)| x).fold(1.0, f64::max);
    // The common limit is drawn on the p95 chart, where it is read.
    let limit = summary
        .common_p95_limit_s
        .filter(|_| metric == "p95_turnaround_s");
    let top = points()
        .map(|(_, s)| s.max)
        .chain(limit)
        .fold(1.0, f64::max);
    chart(dir, name, |root| {
        let titled = root
            .titled(title, ("sans-serif", 20))
            .map_err(|e| e.to_string())?;
        let mut c = ChartBuilder::on(&titled)
            .caption(conditions, ("sans-serif", 13))
            .margin(15)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..max_load * 1.05, 0.0..top * 1.1)
            .map_err(|e| e.to_string())?;
        c.configure_mesh()
            .x_desc("offered load X (arrival rate × X)")
            .y_desc(y_desc)
            .x_label_formatter(&|x| format_load(*x))
            .draw()
            .map_err(|e| e.to_string())?;
        if let Some(limit) = limit {
            let style = BLACK.stroke_width(1);
            c.draw_series(DashedLineSeries::new(
                [(0.0, limit), (max_load * 1.05, limit)],
                6,
                4,
                style,
            ))
            .map_err(|e| e.to_string())?
            .label(format!(
                "common limit: {SUSTAINABLE_P95_GROWTH}× the best stock's p95 at the lowest load ({limit:.0} s)"
            ))
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        for (i, p) in summary.policies.iter().enumerate() {
            let style = colour(i).stroke_width(2);
            let line = p.loads.iter().map(|l| (l.load, l.metrics[metric].mean));
            c.draw_series(LineSeries::new(line, style).point_size(3))
                .map_err(|e| e.to_string())?
                .label(sustainable_label(p, summary.common_p95_limit_s.is_some()))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
            c.draw_series(p.loads.iter().map(|l| {
                let s = l.metrics[metric];
                ErrorBar::new_vertical(l.load, s.min, s.mean, s.max, colour(i), 8)
            }))
            .map_err(|e| e.to_string())?;
        }
        legend(&mut c)
    })
}
