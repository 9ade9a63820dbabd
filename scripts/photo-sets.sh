#!/usr/bin/env bash
# Builds disjoint calibration and validation folders of real photographs from Debian
# packages (installed by scripts/install-deps.sh: opencv-doc, darknet), as symlinks:
#
#   scripts/photo-sets.sh OUTDIR     -> OUTDIR/calib, OUTDIR/val
#
# The opencv-doc photos alternate between the two sets in sorted name order (every
# other one); darknet's photos (dog, eagle, giraffe, horses, kite, person, scream) all go
# to validation, and so do the photos hand-labelled in scripts/photo-labels.txt (their
# ImageNet class; `nnperf quantize --labels`). No file is in both sets: calibrating on the images you validate on
# would hide exactly the overfitting a calibration set can cause.
set -euo pipefail
out=${1:?usage: $0 OUTDIR}
opencv=/usr/share/doc/opencv-doc/examples/data
darknet=/usr/share/darknet/data
for d in "$opencv" "$darknet"; do
  [ -d "$d" ] || { echo "photo-sets: $d missing: run scripts/install-deps.sh (opencv-doc, darknet)" >&2; exit 1; }
done
labels=$(cd "$(dirname "$0")" && pwd)/photo-labels.txt
rm -rf "$out/calib" "$out/val"
mkdir -p "$out/calib" "$out/val"
i=0
# Photographs only: drawings, logos, charts, patterns and scanned text are left out.
skip='^(alphabet|chessboard|digits|gradient|LinuxLogo|WindowsLogo|opencv-logo|sudoku|notes|ml|pic[0-9]|imageText|cards|mask|detect_blob|ellipses|letter|box|graf|text|HappyFish|Blender)'
while IFS= read -r f; do
  b=$(basename "$f")
  [[ "$b" =~ $skip ]] && continue
  # a hand-labelled photo (scripts/photo-labels.txt) always goes to validation
  if awk -v f="$b" '$1 == f { found = 1 } END { exit !found }' "$labels"; then ln -s "$f" "$out/val/$b"
  elif (( i % 2 == 0 )); then ln -s "$f" "$out/calib/$b"; else ln -s "$f" "$out/val/$b"; fi
  i=$((i + 1))
done < <(find "$opencv" -maxdepth 1 -type f \( -name '*.jpg' -o -name '*.png' \) | LC_ALL=C sort)
for f in "$darknet"/*.jpg; do ln -s "$f" "$out/val/dn_$(basename "$f")"; done
echo "photo-sets: $(ls "$out/calib" | wc -l) calibration, $(ls "$out/val" | wc -l) validation photos in $out"
