//! SVG: the plan drawn without Graphviz, so it works on any machine and can sit inside a
//! self-contained HTML report. A column per wave (what can run at once), projects coloured by
//! layer with their estimate, arrows in run order: the critical path in red with its running
//! total, ordering-only needs dashed, the outputs an edge carries in its tooltip.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::xml::xml_text;
use crate::graph::{EdgeKind, Layer, Weighing};
use crate::plan::Plan;

const CRITICAL: &str = "#c0392b";
const NODE_W: u32 = 176;
const NODE_H: u32 = 46;
const COL_W: u32 = 250;
const ROW_H: u32 = 64;
const MARGIN: u32 = 24;
const TOP: u32 = 56;

/// The fill of a layer's projects (a legend at the bottom says which is which).
fn fill(layer: Layer) -> &'static str {
    match layer {
        Layer::Identity => "#ede7f6",
        Layer::Infra => "#e3f2fd",
        Layer::Cluster => "#e8f5e9",
        Layer::Services => "#fff8e1",
        Layer::Apps => "#fce4ec",
    }
}

/// A dot on a project's box, in a colour, saying something (in the HTML report: how the project
/// ended, in the colours of the timeline and the counts).
pub(crate) struct Mark {
    pub(crate) colour: &'static str,
    pub(crate) said: String,
}

/// The plan as one standalone SVG document.
pub(crate) fn svg(plan: &Plan<'_>, labels: &super::EdgeLabels<'_>) -> String {
    svg_of(plan, labels, plan.operation.as_str(), &BTreeMap::new())
}

/// [`svg`], its title naming the command as `command` (a drift check runs a preview plan), each
/// project's box with its mark, if any.
pub(crate) fn svg_of(
    plan: &Plan<'_>,
    labels: &super::EdgeLabels<'_>,
    command: &str,
    marks: &BTreeMap<&str, Mark>,
) -> String {
    let rows = plan.waves.iter().map(Vec::len).max().unwrap_or(0);
    let cols = plan.waves.len();
    // As wide as the waves, or as the legend under them (a swatch per layer, then the lines).
    let legend_width = MARGIN * 2 + u32::try_from(plan.layers().len()).unwrap_or(0) * 90 + 360;
    let width = (MARGIN * 2 + u32::try_from(cols.max(1)).unwrap_or(1) * COL_W - (COL_W - NODE_W)).max(legend_width);
    let height = TOP + u32::try_from(rows.max(1)).unwrap_or(1) * ROW_H + 48;
    // Where each project's box is: its wave's column, its place in the wave.
    let mut at = vec![None; plan.provider.projects.len()];
    for (w, wave) in plan.waves.iter().enumerate() {
        for (r, &i) in wave.iter().enumerate() {
            let x = MARGIN + u32::try_from(w).unwrap_or(0) * COL_W;
            let y = TOP + u32::try_from(r).unwrap_or(0) * ROW_H;
            at[i] = Some((x, y));
        }
    }
    let unit = match plan.critical.weighing {
        Weighing::Estimate => "s",
        Weighing::Count => " projects",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="Helvetica, Arial, sans-serif" font-size="12" role="img">"#
    );
    let title = format!(
        "{command} · provider {} · {} in {} · critical path {}{unit}",
        plan.provider.name,
        super::count(plan.order.len(), "project"),
        super::count(plan.waves.len(), "wave"),
        plan.critical.weight
    );
    let _ = writeln!(out, "  <title>{}</title>", xml_text(&title));
    let _ = writeln!(
        out,
        r##"  <defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker><marker id="arrow-critical" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="{CRITICAL}"/></marker></defs>"##
    );
    let _ = writeln!(
        out,
        r#"  <text x="{MARGIN}" y="22" font-size="14" font-weight="bold">{}</text>"#,
        xml_text(&title)
    );
    for w in 0..cols {
        let x = MARGIN + u32::try_from(w).unwrap_or(0) * COL_W;
        let _ = writeln!(out, r##"  <text x="{x}" y="44" fill="#777">wave {}</text>"##, w + 1);
    }
    edges(&mut out, plan, labels, &at, unit);
    nodes(&mut out, plan, &at, marks);
    legend(&mut out, plan, height);
    out.push_str("</svg>\n");
    out
}

/// Where each project's box is (its wave's column, its place in the wave), by project index.
type Places = Vec<Option<(u32, u32)>>;

/// The arrows, in run order: the critical path red with its running total, ordering-only needs
/// dashed, the outputs each carries in its tooltip.
fn edges(out: &mut String, plan: &Plan<'_>, labels: &super::EdgeLabels<'_>, at: &Places, unit: &str) {
    // The running total of the critical path at the end of each of its projects.
    let mut total = 0u64;
    let mut reached = std::collections::BTreeMap::new();
    for &i in &plan.critical.nodes {
        total += match plan.critical.weighing {
            Weighing::Estimate => plan.project(i).estimate.unwrap_or(0),
            Weighing::Count => 1,
        };
        reached.insert(i, total);
    }
    // How many long edges each row gap carries so far: each a few pixels apart.
    let mut in_gap = std::collections::BTreeMap::<u32, u32>::new();
    for (a, b, kind) in plan.edges() {
        let (Some((ax, ay)), Some((bx, by))) = (at[a], at[b]) else {
            continue;
        };
        let (x1, y1) = (ax + NODE_W, ay + NODE_H / 2);
        let (x2, y2) = (bx, by + NODE_H / 2);
        let route = Route::between((x1, y1), (x2, y2), &mut in_gap);
        let critical = plan.is_critical_edge(a, b);
        let (stroke, width, marker) = if critical {
            (CRITICAL, "2.5", "arrow-critical")
        } else {
            ("#555", "1.2", "arrow")
        };
        let dash = if kind == EdgeKind::Order {
            r#" stroke-dasharray="5,4""#
        } else {
            ""
        };
        let outputs = super::flows(labels, plan.name(a), plan.name(b));
        let tip = if outputs.is_empty() {
            format!("{} → {}", plan.name(a), plan.name(b))
        } else {
            format!("{} → {}: {}", plan.name(a), plan.name(b), super::list(outputs))
        };
        let _ = writeln!(
            out,
            r#"  <path d="{}" fill="none" stroke="{stroke}" stroke-width="{width}"{dash} marker-end="url(#{marker})"><title>{}</title></path>"#,
            route.path,
            xml_text(&tip)
        );
        if critical && let Some(t) = reached.get(&a) {
            let (x, y) = route.label;
            let _ = writeln!(
                out,
                r#"  <text x="{x}" y="{}" fill="{CRITICAL}" font-size="10" text-anchor="middle">{t}{unit}</text>"#,
                y - 4
            );
        }
    }
}

/// The line of an arrow, and where its label goes.
struct Route {
    path: String,
    label: (u32, u32),
}

impl Route {
    /// From the right side of one box to the left side of another. To the next wave, one
    /// curve: no box lies between two columns. Past it, the boxes of the waves between would
    /// hide the arrow: it runs along the gap between two rows (the one nearest to half-way,
    /// each arrow there a few pixels from the last), curving in and out within the columns'
    /// gaps.
    fn between((x1, y1): (u32, u32), (x2, y2): (u32, u32), in_gap: &mut std::collections::BTreeMap<u32, u32>) -> Self {
        let mid = u32::midpoint(x1, x2);
        if x2 <= x1 + (COL_W - NODE_W) {
            return Route {
                path: format!("M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}"),
                label: (mid, u32::midpoint(y1, y2)),
            };
        }
        // Row r's box spans TOP + r·ROW_H .. + NODE_H; the gap below it is ROW_H - NODE_H high.
        let half = u32::midpoint(y1, y2);
        let row = half.saturating_sub(TOP) / ROW_H;
        let gap = TOP + row * ROW_H + NODE_H;
        let taken = in_gap.entry(gap).or_default();
        let gy = gap + 4 + (*taken % 4) * 3;
        *taken += 1;
        let turn = (COL_W - NODE_W) / 2;
        let (a, b) = (x1 + COL_W - NODE_W, x2 - (COL_W - NODE_W));
        Route {
            path: format!(
                "M{x1},{y1} C{},{y1} {},{gy} {a},{gy} L{b},{gy} C{},{gy} {},{y2} {x2},{y2}",
                x1 + turn,
                x1 + turn,
                b + turn,
                b + turn
            ),
            label: (u32::midpoint(a, b), gy),
        }
    }
}

/// A box per project: its name, layer and estimate, the critical path outlined in red, its
/// mark as a dot in the top right corner.
fn nodes(out: &mut String, plan: &Plan<'_>, at: &Places, marks: &BTreeMap<&str, Mark>) {
    for &i in &plan.order {
        let Some((x, y)) = at[i] else { continue };
        let p = plan.project(i);
        let (stroke, width) = if plan.is_critical(i) {
            (CRITICAL, "2.5")
        } else {
            ("#888", "1")
        };
        let estimate = p
            .estimate
            .map_or_else(|| "no estimate".to_string(), |e| format!("est. {e}s"));
        let mark = marks.get(plan.name(i));
        let said = mark.map_or_else(String::new, |m| format!(": {}", xml_text(&m.said)));
        let dot = mark.map_or_else(String::new, |m| {
            format!(
                r##"<circle cx="{}" cy="{}" r="6" fill="{}" stroke="#fff" stroke-width="1.5"/>"##,
                x + NODE_W - 13,
                y + 13,
                m.colour
            )
        });
        let _ = writeln!(
            out,
            r##"  <g class="project" data-name="{name}"><title>{name} ({layer}, wave {wave}, {estimate}){said}</title><rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="8" fill="{fill}" stroke="{stroke}" stroke-width="{width}"/>{dot}<text x="{tx}" y="{ty1}" font-weight="bold">{name}</text><text x="{tx}" y="{ty2}" fill="#555" font-size="11">{layer} · {estimate}</text></g>"##,
            name = xml_text(plan.name(i)),
            layer = p.layer,
            wave = plan.wave(i),
            fill = fill(p.layer),
            tx = x + 10,
            ty1 = y + 19,
            ty2 = y + 36,
        );
    }
}

/// The legend: the layers present, the critical path, ordering-only needs.
fn legend(out: &mut String, plan: &Plan<'_>, height: u32) {
    let ly = height - 20;
    let mut lx = MARGIN;
    for layer in plan.layers() {
        let _ = writeln!(
            out,
            r##"  <rect x="{lx}" y="{}" width="14" height="14" rx="3" fill="{}" stroke="#888"/><text x="{}" y="{ly}">{layer}</text>"##,
            ly - 11,
            fill(layer),
            lx + 18
        );
        lx += 90;
    }
    // The numbers on the critical path's arrows are its running total, said here.
    let _ = writeln!(
        out,
        r##"  <line x1="{lx}" y1="{y}" x2="{}" y2="{y}" stroke="{CRITICAL}" stroke-width="2.5"/><text x="{}" y="{ly}">critical path (its running total)</text><line x1="{}" y1="{y}" x2="{}" y2="{y}" stroke="#555" stroke-dasharray="5,4"/><text x="{}" y="{ly}">order only</text>"##,
        lx + 24,
        lx + 30,
        lx + 250,
        lx + 274,
        lx + 280,
        y = ly - 4
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{Operation, Plan};

    /// d needs a, three waves apart, past b and c in the waves between: its arrow runs along a
    /// gap between rows, through no box.
    #[test]
    fn an_arrow_past_a_wave_runs_between_its_boxes() {
        let provider = crate::provider::for_tests(
            [("a", vec![]), ("b", vec!["a"]), ("c", vec!["b"]), ("d", vec!["a", "c"])]
                .into_iter()
                .map(|(n, ns): (&str, Vec<&str>)| (n.to_string(), ns.into_iter().map(str::to_string).collect())),
        );
        let plan = Plan::new(&provider, Operation::Up, &[]).unwrap();
        let out = svg(&plan, &super::super::EdgeLabels::default());
        let long = out
            .lines()
            .find(|l| l.contains("<title>a → d</title>"))
            .unwrap_or_else(|| panic!("{out}"));
        let d = long.split("d=\"").nth(1).unwrap().split('"').next().unwrap();
        let straight = d.split(" L").nth(1).unwrap_or_else(|| panic!("a straight run: {d}"));
        let gy: u32 = straight.split([',', ' ']).nth(1).unwrap().parse().unwrap();
        // Every box is one row (the graph is a chain, a then b then c then d): row 0.
        assert!(
            gy > TOP + NODE_H && gy < TOP + ROW_H,
            "{gy} is in the gap under row 0: {d}"
        );
        // The arrow to the next wave is still one curve.
        let short = out.lines().find(|l| l.contains("<title>a → b</title>")).unwrap();
        assert!(!short.contains(" L"), "{short}");
    }
}
