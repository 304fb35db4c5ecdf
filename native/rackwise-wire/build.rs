//! Generates the wire types from `proto/rackwise.proto`, the one schema the Java side also
//! generates from. protoc comes from the `protoc-bin-vendored` crate, so neither a developer
//! nor CI installs anything by hand.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto");
    let schema = proto_dir.join("rackwise.proto");
    println!("cargo:rerun-if-changed={}", schema.display());
    let protoc = protoc_bin_vendored::protoc_bin_path()?;
    prost_build::Config::new()
        .protoc_executable(protoc)
        // Ordered maps: the core's protocol types are BTreeMaps, so conversion moves them
        // over instead of re-sorting, and encoding is deterministic.
        .btree_map(["."])
        .compile_protos(&[schema], &[proto_dir])?;
    Ok(())
}
