//! `include/rackwise.h` is committed so C callers need no Rust toolchain; this test keeps it
//! identical to what cbindgen makes of `src/c_abi.rs`.

use std::path::Path;

#[test]
fn committed_header_matches_the_c_abi() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/c_abi.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);

    let header = crate_dir.join("include/rackwise.h");
    if std::env::var_os("RACKWISE_BLESS_HEADER").is_some() {
        std::fs::write(&header, &generated).expect("header written");
        return;
    }
    let committed = std::fs::read(&header).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is out of date with src/c_abi.rs. Regenerate it with\n    \
         RACKWISE_BLESS_HEADER=1 cargo test -p rackwise-jni --test header\n\
         and commit the result.",
        header.display()
    );
}
