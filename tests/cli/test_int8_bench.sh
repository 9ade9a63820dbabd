#!/usr/bin/env bash
# nnperf bench --precision fp32,int8 --int8-model Q.onnx on zoo:tiny quantized by nnperf
# quantize: the native int8 row runs the QDQ file on the INT8 kernels (QLinearConv,
# QLinearAdd, uint8 MaxPool after fuse-qdq); every backend's int8 row shows its speed-up
# against its own fp32 row ("Nx vs own fp32"); ort-cpu's and openvino's int8 rows, where
# those backends are available, carry their agreement with nnperf's int8 outputs (top-1,
# cosine) in the JSON and the table notes. Short runs only: no timing is judged.
set -uo pipefail
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3

"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || bad "zoo tiny"
mkdir -p "$work/calib"
$py "$(dirname "$0")/calib_npy.py" "$work/calib" 11
"$nnperf" quantize "$work/tiny.onnx" --calib "$work/calib" -o "$work/q.onnx" > /dev/null 2> "$work/q.err" \
  || { bad "quantize"; cat "$work/q.err"; }

# the native engine's plan of the QDQ file: INT8 ops, no float Add / DQ->MaxPool glue left
"$nnperf" inspect "$work/q.onnx" --engine-graph > "$work/inspect.txt" 2>&1 || bad "inspect"
grep -q ' QLinearConv ' "$work/inspect.txt" && grep -q ' QLinearAdd ' "$work/inspect.txt" \
  && ! grep -qE ' (Add|FusedElementwise) ' "$work/inspect.txt" \
  && ok "native plan: QLinearConv and QLinearAdd, no float Add" || { bad "native plan ops"; cat "$work/inspect.txt"; }

backends=native
avail=$("$nnperf" backends 2>/dev/null)
for b in ort-cpu openvino; do
  if grep -qE "^$b +available" <<< "$avail"; then backends="$backends,$b"; else echo "note: $b unavailable here: its int8 row is not checked"; fi
done
"$nnperf" bench "$work/tiny.onnx" --backends "$backends" --precision fp32,int8 --int8-model "$work/q.onnx" \
  --threads 1 --iterations 10 --min-time 0 --warmup 1 --processes 1 --no-history --json "$work/b.json" \
  > "$work/b.txt" 2> "$work/b.err"
rc=$?
[ $rc -eq 0 ] && ok "bench int8 rows ($backends) exit 0" || { bad "bench exit $rc"; cat "$work/b.err" "$work/b.txt"; }
for b in ${backends//,/ }; do
  grep -qE "^$b int8 t1 b1 +ok .*[0-9.]+x vs own fp32" "$work/b.txt" && ok "$b int8 row: speed-up vs its own fp32 row" \
    || { bad "$b int8 row: no 'vs own fp32'"; cat "$work/b.txt"; }
done
$py - "$work/b.json" "$backends" <<'PY' && ok "JSON: int8 rows ok, others agree with nnperf's int8 outputs" || bad "JSON int8 agreement"
import json, sys
rows = {r["label"]: r for r in json.load(open(sys.argv[1]))["rows"]}
for b in sys.argv[2].split(","):
    r = rows[f"{b} int8 t1 b1"]
    assert r["status"] == "ok" and r["precision"] == "int8", r
    assert r["accuracy"]["reference"] == "native fp32 t1 b1", r["accuracy"]
    agree = r["int8_agreement"]
    if b == "native":
        assert agree["compared"] is False, agree
        continue
    # the same QDQ model: the same class, outputs near-identical (a rounding tie at most)
    assert agree["compared"] and agree["reference"] == "native int8 t1 b1", agree
    assert agree["top1"] == 1.0 and agree["cosine"] > 0.999, agree
PY
# the native int8 row says which INT8 kernels ran and where AMX stands (issue 26, dispatch)
grep -qE "^  'native int8 t1 b1': .*int8 kernels: (avx512vnni|avx2|generic) x[0-9]+.* \(AMX [a-z]" "$work/b.txt" \
  && ok "native int8 note: INT8 kernel family and AMX state" || { bad "native int8 note"; cat "$work/b.txt"; }
# the accuracy criterion per precision: fp32 rows by max_rel, int8 rows by output cosine
# (their max_rel is reported, not judged), named in the JSON and the table notes
$py - "$work/b.json" <<'PY' && ok "JSON: int8 rows judged by cosine, fp32 rows by max_rel" || bad "JSON accuracy criterion"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_minor"] >= 3 and d["accuracy_rtol"] == -1, (d["schema_minor"], d["accuracy_rtol"])
for r in d["rows"]:
    a = r["accuracy"]
    if not a["compared"]:
        assert a["criterion"] is None, a
        continue
    if r["precision"] == "fp32":
        assert a["criterion"] == "max_rel <= 1e-04" and a["within_tol"] == (a["max_rel"] <= 1e-4), a
    else:
        assert a["criterion"] == "cosine >= 0.99, top-1 >= 90% over 10+ rows", a
        assert a["within_tol"] == (a["cosine"] >= 0.99) and a["within_tol"], a  # batch 1: top-1 not judged
PY
grep -q "within tolerance: fp32 max_rel <= 1e-04; int8 cosine >= 0.99, top-1 >= 90% over 10+ rows" "$work/b.txt" \
  && grep -qE "^  cosine vs ref: 'native int8 t1 b1' [01]\.[0-9]{5}" "$work/b.txt" \
  && ok "table notes: criterion per precision, int8 cosines" || { bad "table notes: criterion"; cat "$work/b.txt"; }
if [ "$backends" != native ]; then
  grep -q "int8 agreement '.* int8 t1 b1' vs 'native int8 t1 b1' (same QDQ model): top-1 100%" "$work/b.txt" \
    && ok "table notes: int8 agreement" || { bad "table notes"; cat "$work/b.txt"; }
fi

# the report shows what judged each int8 row: its cosine in the accuracy cell, the
# criterion as the cell's title
"$nnperf" report "$work/b.json" -o "$work/b.html" > /dev/null 2> "$work/r.err"
grep -q "title='cosine &gt;= 0.99, top-1 &gt;= 90% over 10+ rows'>[0-9.e+-]*, cos [01]\.[0-9]\{5\}" "$work/b.html" \
  && ok "report: int8 cells show the cosine and the criterion" || { bad "report int8 cell"; cat "$work/r.err"; }

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
