//! The core's modules form layers, each using only the ones below it, so there is no import
//! cycle and the cluster state knows nothing of the policies (docs/architecture.md):
//!
//! error, protocol < mapreduce < predictor < settings < state < netsat < policy < engine

use std::fs;
use std::path::{Path, PathBuf};

const LAYERS: &[&[&str]] = &[
    &["error", "protocol"],
    &["mapreduce"],
    &["predictor"],
    &["settings"],
    &["state"],
    &["netsat"],
    &["policy"],
    &["engine"],
];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module {module} has no layer: add it to LAYERS and the doc"))
}

fn sources(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The top-level module a source file belongs to (`src/policy/nas/mod.rs` -> `policy`).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// Every `crate::<module>` the file's code (not its comments) names.
fn used_modules(text: &str) -> Vec<String> {
    let mut used = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                used.push(name);
            }
        }
        // `use crate::{a, b}` names several.
        if let Some(group) = code.split("use crate::{").nth(1) {
            for name in group.split(['}', ',']).map(|s| s.trim()) {
                let module: String = name
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !module.is_empty() {
                    used.push(module);
                }
            }
        }
    }
    used
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut violations = Vec::new();
    let mut checked = 0;
    for file in &files {
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let own = layer_of(&module);
        for used in used_modules(&fs::read_to_string(file).unwrap()) {
            checked += 1;
            if used != module && layer_of(&used) >= own {
                violations.push(format!("{} uses crate::{used}", file.display()));
            }
        }
    }
    assert!(
        checked > 20,
        "the scan found only {checked} uses: is it reading the sources?"
    );
    assert!(violations.is_empty(), "{violations:#?}");
}

#[test]
fn the_scan_sees_a_use_of_a_higher_layer() {
    let text = "use crate::policy::Offer;\nuse crate::{settings, state::Node};\n// crate::engine\n";
    assert_eq!(used_modules(text), ["policy", "settings", "state"]);
}
