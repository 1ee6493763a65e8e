#!/usr/bin/env bash
# Installs the Debian packages bitline needs, only those that are missing.
# Everything comes from Debian's archive; nothing is downloaded from elsewhere.
#   scripts/install-deps.sh         what `make`, `make test` and `make asan` need (g++)
#   scripts/install-deps.sh fuzz    and also clang + libFuzzer for `make fuzz`
set -euo pipefail
pkgs=(g++ cmake ninja-build make pkg-config python3 python3-dev pybind11-dev python3-matplotlib python3-pytest python3-yaml
      libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
      libgtest-dev libgmock-dev libbenchmark-dev libpugixml-dev libroaring-dev clang-format
      libopenmpi-dev openmpi-bin time)  # time: peak memory in `make bench`; MPI is optional for the build (CMake finds it or not); see docs/commands.md, "On a cluster (MPI)"
# libclang-rt-14-dev holds clang's sanitizer runtimes (only recommended by clang, and recommends are not installed).
fuzz_pkgs=(clang libclang-rt-14-dev libfuzzer-14-dev)
case "${1:-}" in
  "") ;;
  fuzz) pkgs+=("${fuzz_pkgs[@]}") ;;
  *) echo "usage: $0 [fuzz]" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then exit 0; fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
