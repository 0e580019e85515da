#!/usr/bin/env bash
# Installs the Debian 12 packages stepcast builds against, skipping those already present.
# The CUDA toolkit (with cuBLAS, cuDNN and NCCL) is expected at /usr/local/cuda and is not
# installed here; without it the build switches CUDA off and says so in its feature summary.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libeigen3-dev libboost-graph-dev libtbb-dev
  qt6-base-dev qt6-charts-dev qt6-svg-dev libgl-dev fonts-dejavu-core
  # Qt6Charts' CMake package needs Qt6OpenGL's, which Debian 12 ships apart from qt6-base-dev:
  # without it find_package(Qt6 ... Charts) fails and the GUI is silently left out of the build.
  libqt6opengl6-dev
  doctest-dev libbenchmark-dev
  libopenmpi-dev openmpi-bin
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
echo "install-deps: installing ${missing[*]}"
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
