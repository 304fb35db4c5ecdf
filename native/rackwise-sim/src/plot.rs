//! PNG charts without a plotting dependency: a tiny raster, lines and bars, and a PNG encoder
//! using stored (uncompressed) deflate blocks. Charts carry no text; the legend is the file
//! name and the colour order documented in docs/simulator.md.

use crate::metrics::{Collector, PolicyMetrics};
use crate::workload::{JobSpec, ShuffleClass};
use std::collections::BTreeMap;

/// Policy colours, in the order the policies were given.
const COLOURS: [[u8; 3]; 8] = [
    [31, 119, 180],
    [255, 127, 14],
    [44, 160, 44],
    [214, 39, 40],
    [148, 103, 189],
    [140, 86, 75],
    [227, 119, 194],
    [127, 127, 127],
];

struct Canvas {
    w: usize,
    h: usize,
    px: Vec<u8>,
}

impl Canvas {
    fn new(w: usize, h: usize) -> Canvas {
        Canvas {
            w,
            h,
            px: vec![255; w * h * 3],
        }
    }

    fn set(&mut self, x: i64, y: i64, c: [u8; 3]) {
        if x >= 0 && y >= 0 && (x as usize) < self.w && (y as usize) < self.h {
            let i = (y as usize * self.w + x as usize) * 3;
            self.px[i..i + 3].copy_from_slice(&c);
        }
    }

    fn line(&mut self, (x0, y0): (f64, f64), (x1, y1): (f64, f64), c: [u8; 3]) {
        let steps = ((x1 - x0).abs().max((y1 - y0).abs()) as usize).max(1);
        for s in 0..=steps {
            let t = s as f64 / steps as f64;
            let (x, y) = (x0 + (x1 - x0) * t, y0 + (y1 - y0) * t);
            self.set(x as i64, y as i64, c);
            self.set(x as i64, y as i64 + 1, c);
        }
    }

    fn rect(&mut self, x0: usize, y0: usize, x1: usize, y1: usize, c: [u8; 3]) {
        for y in y0..y1 {
            for x in x0..x1 {
                self.set(x as i64, y as i64, c);
            }
        }
    }

    fn axes(&mut self, m: usize) {
        let grey = [0, 0, 0];
        let (w, h) = (self.w as f64, self.h as f64);
        self.line((m as f64, h - m as f64), (w - m as f64, h - m as f64), grey);
        self.line((m as f64, m as f64), (m as f64, h - m as f64), grey);
    }

    fn png(&self) -> Vec<u8> {
        let mut raw = Vec::with_capacity((self.w * 3 + 1) * self.h);
        for y in 0..self.h {
            raw.push(0);
            raw.extend_from_slice(&self.px[y * self.w * 3..(y + 1) * self.w * 3]);
        }
        let mut out = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
        let mut ihdr = Vec::new();
        ihdr.extend_from_slice(&(self.w as u32).to_be_bytes());
        ihdr.extend_from_slice(&(self.h as u32).to_be_bytes());
        ihdr.extend_from_slice(&[8, 2, 0, 0, 0]);
        chunk(&mut out, b"IHDR", &ihdr);
        chunk(&mut out, b"IDAT", &zlib_stored(&raw));
        chunk(&mut out, b"IEND", &[]);
        out
    }
}

fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let mut body = kind.to_vec();
    body.extend_from_slice(data);
    out.extend_from_slice(&body);
    out.extend_from_slice(&crc32(&body).to_be_bytes());
}

/// zlib stream of stored deflate blocks (no compression: charts are small).
fn zlib_stored(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0x78, 0x01];
    let blocks: Vec<&[u8]> = data.chunks(65_535).collect();
    for (i, block) in blocks.iter().enumerate() {
        out.push(if i + 1 == blocks.len() { 1 } else { 0 });
        let len = block.len() as u16;
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&(!len).to_le_bytes());
        out.extend_from_slice(block);
    }
    if blocks.is_empty() {
        out.extend_from_slice(&[1, 0, 0, 0xFF, 0xFF]);
    }
    let (mut a, mut b) = (1u32, 0u32);
    for &x in data {
        a = (a + x as u32) % 65_521;
        b = (b + a) % 65_521;
    }
    out.extend_from_slice(&((b << 16) | a).to_be_bytes());
    out
}

const W: usize = 800;
const H: usize = 500;
const M: usize = 40;

fn write(dir: &str, name: &str, canvas: &Canvas) -> Result<(), String> {
    let path = std::path::Path::new(dir).join(name);
    std::fs::write(&path, canvas.png()).map_err(|e| format!("{}: {e}", path.display()))
}

/// throughput.png (bars), cdf-<class>.png (turnaround CDF per policy), cross-rack.png
/// (cross-rack GiB per minute per policy).
pub fn write_all(
    dir: &str,
    metrics: &BTreeMap<String, PolicyMetrics>,
    collectors: &[(String, Collector)],
    jobs: &[JobSpec],
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{dir}: {e}"))?;
    let mut bars = Canvas::new(W, H);
    bars.axes(M);
    let top = collectors
        .iter()
        .map(|(n, _)| metrics[n].throughput_jobs_per_hour)
        .fold(0.0, f64::max)
        .max(1e-9);
    let slot = (W - 2 * M) / collectors.len().max(1);
    for (i, (name, _)) in collectors.iter().enumerate() {
        let height = ((H - 2 * M) as f64 * metrics[name].throughput_jobs_per_hour / top) as usize;
        let x0 = M + i * slot + slot / 5;
        bars.rect(
            x0,
            H - M - height,
            x0 + slot * 3 / 5,
            H - M,
            COLOURS[i % COLOURS.len()],
        );
    }
    write(dir, "throughput.png", &bars)?;

    for class in ShuffleClass::ALL {
        let mut canvas = Canvas::new(W, H);
        canvas.axes(M);
        let curves: Vec<Vec<f64>> = collectors
            .iter()
            .map(|(_, c)| {
                let mut v: Vec<f64> = c
                    .turnarounds(jobs)
                    .into_iter()
                    .filter(|(k, _)| *k == class)
                    .map(|(_, t)| t)
                    .collect();
                v.sort_by(f64::total_cmp);
                v
            })
            .collect();
        // Log-scaled time axis: turnarounds span seconds to days.
        let max = curves
            .iter()
            .filter_map(|v| v.last())
            .fold(1.0f64, |a, b| a.max(*b))
            .max(10.0);
        let x_of = |t: f64| M as f64 + (W - 2 * M) as f64 * (t.max(1.0).ln() / max.ln());
        for (i, v) in curves.iter().enumerate() {
            let mut last = (M as f64, (H - M) as f64);
            for (k, t) in v.iter().enumerate() {
                let p = (
                    x_of(*t),
                    (H - M) as f64 - (H - 2 * M) as f64 * (k + 1) as f64 / v.len() as f64,
                );
                canvas.line(last, p, COLOURS[i % COLOURS.len()]);
                last = p;
            }
        }
        write(dir, &format!("cdf-{}.png", class.name()), &canvas)?;
    }

    let mut canvas = Canvas::new(W, H);
    canvas.axes(M);
    let minutes = collectors
        .iter()
        .map(|(_, c)| c.timeline.len())
        .max()
        .unwrap_or(1)
        .max(1);
    let peak = collectors
        .iter()
        .flat_map(|(_, c)| c.timeline.iter().map(|(a, b, d)| a + b + d))
        .fold(1.0f64, f64::max);
    for (i, (_, c)) in collectors.iter().enumerate() {
        let mut last = None;
        for (m, (a, b, d)) in c.timeline.iter().enumerate() {
            let p = (
                M as f64 + (W - 2 * M) as f64 * m as f64 / minutes as f64,
                (H - M) as f64 - (H - 2 * M) as f64 * (a + b + d) / peak,
            );
            if let Some(l) = last {
                canvas.line(l, p, COLOURS[i % COLOURS.len()]);
            }
            last = Some(p);
        }
    }
    write(dir, "cross-rack.png", &canvas)
}
