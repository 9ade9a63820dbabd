#!/usr/bin/env bash
# Makes build-gpu/bundle: nnperf built here (Release) with the shared libraries it needs
# beside it, for a GPU machine that cannot build it. The GPU machines lent for short
# checks (docs/backends.md) have CMake and a compiler but not protobuf-c, protoc-c,
# onnx.proto, jansson, sqlite3, libcurl, libjpeg/libpng or XNNPACK, and no registry to
# install them from; scripts/gpu-check.sh uses this bundle when it finds it and builds
# from source otherwise.
#
# The binary's DT_RPATH is $ORIGIN/lib (not LD_LIBRARY_PATH: the Python workers it starts
# must keep their own libssl, libz, libffi), and DT_RPATH rather than DT_RUNPATH so that
# libcurl's own dependencies are found there too. glibc is not copied: the binary needs
# glibc >= this machine's (Debian 12: 2.36). About 20 MB.
#
#   scripts/gpu-bundle.sh            then carry build-gpu/bundle to the GPU machine
set -euo pipefail
cd "$(dirname "$0")/.."
b=build-gpu
mkdir -p "$b"
cmake -S . -B "$b" -DCMAKE_BUILD_TYPE=Release '-DCMAKE_BUILD_RPATH=$ORIGIN/lib' \
  -DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags > "$b/bundle.log" 2>&1 || { tail -20 "$b/bundle.log"; exit 1; }
cmake --build "$b" -j"${JOBS:-2}" --target nnperf_cli >> "$b/bundle.log" 2>&1 || { tail -20 "$b/bundle.log"; exit 1; }
rm -rf "$b/bundle"
mkdir -p "$b/bundle/lib"
cp "$b/nnperf" "$b/bundle/nnperf"
ldd "$b/nnperf" | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | while read -r lib; do
  case "$(basename "$lib")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | libresolv.so.* | ld-linux*) ;; # glibc
    *) cp -L "$lib" "$b/bundle/lib/" ;;
  esac
done
readelf -d "$b/bundle/nnperf" | grep -q 'RPATH.*\$ORIGIN/lib' || { echo "gpu-bundle: no \$ORIGIN/lib RPATH in the binary"; exit 1; }
echo "gpu-bundle: $b/bundle ($(du -sh "$b/bundle" | cut -f1), $(ls "$b/bundle/lib" | wc -l) libraries)"
