#!/bin/sh
# Fails unless the lock file holds exactly one package named "jni".
#
# Two jni versions in one cdylib means two copies of the JNI glue with their own caches and
# class lookups, and types that do not convert between them; it creeps in through a dependency
# that pins another jni. The workspace declares jni once ([workspace.dependencies]); this keeps
# the lock file honest about it.
set -eu
lock="${1:-Cargo.lock}"
if [ ! -f "$lock" ]; then
  echo "check-single-jni: $lock not found" >&2
  exit 2
fi
versions=$(awk '/^\[\[package\]\]/ { name = "" }
                /^name = "jni"$/ { name = "jni" }
                name == "jni" && /^version = / { gsub(/"/, "", $3); print $3; name = "" }' "$lock")
count=$(printf '%s\n' "$versions" | grep -c . || true)
if [ "$count" -ne 1 ]; then
  echo "check-single-jni: $lock holds $count packages named \"jni\" (versions: $(echo $versions))," >&2
  echo "exactly one is allowed. Run 'cargo tree -i jni@<version>' to find what pulls the extra one" >&2
  echo "and align it with the workspace's jni in Cargo.toml [workspace.dependencies]." >&2
  exit 1
fi
echo "check-single-jni: one jni in $lock ($versions)"
