#!/bin/bash
# The installed tree works from any folder, and a tree finds its own configs (issue 56): `cmake --install` into a
# scratch PREFIX, then the installed program, run from another folder without BITLINE_CONFIG_DIR, lists the shipped
# kinds and one added to the installed configs only (so it reads PREFIX/share/bitline/configs, not the clone's).
# Then the same for a copy of a clone (its program finds the copy's configs/, not the original's).
# Usage: install_check.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cp "$tmp/prefix/share/bitline/configs/gpus/h100.yaml" "$tmp/prefix/share/bitline/configs/gpus/only-installed.yaml"
sed -i 's/^description: .*/description: "a kind in the installed tree only"/' "$tmp/prefix/share/bitline/configs/gpus/only-installed.yaml"
mkdir "$tmp/elsewhere"
cd "$tmp/elsewhere"
out=$(env -u BITLINE_CONFIG_DIR "$tmp/prefix/bin/bitline" accel kinds)
for k in h100 h200 csi only-installed; do
  grep -q "^$k " <<<"$out" || { echo "installed bitline accel kinds: no '$k' in:"; echo "$out"; exit 1; }
done
env -u BITLINE_CONFIG_DIR "$tmp/prefix/bin/bitline" accel run --model llama2-7b --system only-installedx1 --context 512:128 --slo 50 >/dev/null
test -f "$tmp/prefix/share/bitline/scripts/plot.py"
# A copied clone uses its own configs: the program in CLONE/build/release/src/cli/ finds CLONE/configs.
mkdir -p "$tmp/clone/build/release/src/cli"
cp "$build/src/cli/bitline" "$tmp/clone/build/release/src/cli/"
cp -r "$tmp/prefix/share/bitline/configs" "$tmp/clone/configs"
mv "$tmp/clone/configs/gpus/only-installed.yaml" "$tmp/clone/configs/gpus/only-in-the-copy.yaml"
out=$(env -u BITLINE_CONFIG_DIR "$tmp/clone/build/release/src/cli/bitline" accel kinds)
grep -q "^only-in-the-copy " <<<"$out" || { echo "a copied clone's bitline accel kinds: no 'only-in-the-copy' in:"; echo "$out"; exit 1; }
echo "install check: ok"
