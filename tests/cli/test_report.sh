#!/usr/bin/env bash
# nnperf report: the HTML page of a real bench run (ok rows and a crashed one) is one
# self-contained file (no network references), carries its SVG charts, the environment
# and the full result JSON; headless Chromium renders it, on a desktop and a phone width,
# to screenshots that are not blank, with the SVGs in the rendered DOM, and prints it to
# PDF. Exit 77 (skip, with the reason) only when Chromium cannot start at all.
set -uo pipefail
nnperf=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NNPERF_HISTORY="$work/history.db"
passed=0 failed=0
ok() { echo "pass $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3
quick=(--warmup 2 --iterations 40 --min-time 0 --threads 1 --processes 2)

"$nnperf" zoo tiny -o "$work/tiny.onnx" > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
"$nnperf" bench "$work/tiny.onnx" --backends native,fault --backend-options fault:mode=segv,after=3 --batch 1,2 \
  "${quick[@]}" --quiet --json "$work/r.json" > /dev/null 2>&1
[ -s "$work/r.json" ] || { echo "FAIL bench wrote no result"; exit 1; }

"$nnperf" report "$work/r.json" -o "$work/report.html" 2> "$work/err" && ok "report writes the page" ||
  bad "report: $(cat "$work/err")"
$py - "$work/report.html" "$work/r.json" <<'PY' && ok "page: self-contained, SVG charts, env, embedded + downloadable JSON" || bad "page content"
import base64, json, re, sys
html = open(sys.argv[1], encoding="utf-8").read()
orig = json.load(open(sys.argv[2]))
ok_rows = [i for i, r in enumerate(orig["rows"]) if r["status"] == "ok"]
assert len(ok_rows) == 2 and len(orig["rows"]) == 4, [r["status"] for r in orig["rows"]]
# nothing fetched from anywhere: no external scripts, styles, images, fonts or imports
assert not re.search(r"""(src|href)\s*=\s*['"]?\s*(https?:|//)""", html, re.I), "external reference"
assert not re.search(r"<(link|img|iframe|object)\b|@import|url\(", html, re.I), "external resource"
for chart in ["bars-latency", "bars-memory", "bars-startup"] + [f"{k}-{i}" for i in ok_rows for k in ("cdf", "box")]:
    assert f"id='{chart}'" in html, chart
assert html.count("<svg") == 3 + 2 * len(ok_rows), html.count("<svg")
assert "id='env'" in html and "id='summary'" in html and "crashed" in html
assert "@media print" in html and "@media (max-width" in html and "name='viewport'" in html
# the full result, raw samples included, embedded and as a data: URI
emb = re.search(r"<script type='application/json' id='nnperf-result'>(.*?)</script>", html, re.S).group(1)
assert json.loads(emb)["rows"][0]["samples_s"] == orig["rows"][0]["samples_s"]
uri = re.search(r"id='download-json' download='result.json' href='data:application/json;base64,([^']*)'", html).group(1)
assert json.loads(base64.b64decode(uri)) == json.loads(emb)
csv = re.search(r"href='data:text/csv;base64,([^']*)'", html).group(1)
lines = base64.b64decode(csv).decode().splitlines()
assert lines[0] == "iteration,process,latency_s" and len(lines) == 1 + len(orig["rows"][0]["samples_s"])
PY

# a label with markup is escaped, not interpreted
$py - "$work/r.json" "$work/evil.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["rows"][0]["label"] = "<script>alert(1)</script> & 'x'"
d["rows"][0]["reason"] = "</script><b>"
json.dump(d, open(sys.argv[2], "w"))
PY
"$nnperf" report "$work/evil.json" -o "$work/evil.html" > /dev/null 2>&1
! grep -q "<script>alert" "$work/evil.html" && grep -q "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &#39;x&#39;" "$work/evil.html" &&
  ok "labels are HTML-escaped" || bad "labels are not escaped"

# many rows: charts take the first 64 and say so, the table and the per-row charts take all
$py - "$work/r.json" "$work/many.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["rows"] = [dict(d["rows"][0], label=f"row {i}") for i in range(70)]
json.dump(d, open(sys.argv[2], "w"))
PY
"$nnperf" report "$work/many.json" -o "$work/many.html" > /dev/null 2>&1 && grep -q "first 64 of 70 rows" "$work/many.html" &&
  [ "$(grep -o "id='cdf-" "$work/many.html" | wc -l)" -eq 70 ] && ok "70 rows: all in the page, charts say they show 64" ||
  bad "70 rows"

# errors: exit 1 with one line naming the problem; exit 2 for the command line
"$nnperf" report "$work/missing.json" -o "$work/x.html" 2> "$work/err"; rc=$?
[ $rc -eq 1 ] && [ "$(wc -l < "$work/err")" -eq 1 ] && grep -q missing.json "$work/err" && ok "missing result: exit 1, one line" ||
  bad "missing result (exit $rc): $(cat "$work/err")"
printf '{"schema_version": 1, "tool": "nnperf", "rows": [{"status": "ok", "stats": {"p50": "fast"}}]}' > "$work/bad.json"
"$nnperf" report "$work/bad.json" -o "$work/x.html" 2> "$work/err"; rc=$?
[ $rc -eq 1 ] && grep -q "rows\[0\].stats.p50" "$work/err" && ok "malformed result: exit 1 naming rows[0].stats.p50" ||
  bad "malformed result (exit $rc): $(cat "$work/err")"
[ ! -e "$work/x.html" ] && ok "no page written for a bad result" || bad "a page was written for a bad result"
"$nnperf" report "$work/r.json" > /dev/null 2>&1; [ $? -eq 2 ] && ok "no -o: exit 2" || bad "no -o: not exit 2"

# nnperf bench --html writes the same page at the end of the run
"$nnperf" bench "$work/tiny.onnx" --backends native "${quick[@]}" --quiet --no-history --html "$work/b.html" > /dev/null 2>&1
grep -q "id='cdf-0'" "$work/b.html" 2>/dev/null && grep -q "id='nnperf-result'" "$work/b.html" && ok "bench --html" || bad "bench --html"

# issue 25: every row's CDF on one time axis, ticks never in e-notation, memory bars named
# in words; two rows of very different speed (threads 1 and 2 of another batch) show it
"$nnperf" bench "$work/tiny.onnx" --backends native --batch 1,8 "${quick[@]}" --quiet --no-history --html "$work/two.html" > /dev/null 2>&1
/usr/bin/python3 - "$work/two.html" <<'PY' && ok "CDFs share one axis; plain ticks; memory legend in words" || bad "CDF axis / ticks / legend"
import re, sys
h = open(sys.argv[1]).read()
cdfs = re.findall(r"<svg id='cdf-\d+'.*?</svg>", h, re.S)
ticks = [re.findall(r"text-anchor='(?:middle|end)'>([^<]*ms|[0-9.]+)</text>", c) for c in cdfs]
assert len(cdfs) == 2 and ticks[0] == ticks[1], ticks
assert not re.search(r"class='tick'[^>]*>[^<]*e\+", h)
assert "VmHWM</text>" not in h and "peak RSS (kernel VmHWM at exit)" in h
PY

# a history run id works where a file does
"$nnperf" bench "$work/tiny.onnx" --backends native "${quick[@]}" --quiet > /dev/null 2>&1
"$nnperf" report 1 -o "$work/h.html" 2> "$work/err" && grep -q "id='cdf-0'" "$work/h.html" &&
  ok "report of history run 1" || bad "report of history run 1: $(cat "$work/err")"

# load and coldstart results: the same writer, reader and renderer. The load page carries
# the latency-vs-QPS curve (P50 and P99, 12 sweep points each, the capacity marked), the
# table of runs and the start-up; --html and nnperf report of its --json are the same page
"$nnperf" load "$work/tiny.onnx" --backend fault --backend-options mode=none,sleep_ms=2 --sweep --duration 300ms \
  --no-history --json "$work/load.json" --html "$work/load-direct.html" > /dev/null 2> "$work/err"
"$nnperf" report "$work/load.json" -o "$work/load.html" 2>> "$work/err" && cmp -s "$work/load.html" "$work/load-direct.html" &&
  ok "load --html and report of load --json give the same page" || bad "load page: $(cat "$work/err")"
$py - "$work/load.html" <<'PY' && ok "load page: curve SVG (P50, P99, capacity), runs table, self-contained" || bad "load page content"
import re, sys
html = open(sys.argv[1], encoding="utf-8").read()
assert not re.search(r"""(src|href)\s*=\s*['"]?\s*(https?:|//)""", html, re.I), "external reference"
curve = re.search(r"<svg id='load-curve'.*?</svg>", html, re.S).group(0)
assert curve.count("<polyline") == 2 and curve.count("<circle") == 24, (curve.count("<polyline"), curve.count("<circle"))
assert "id='load-capacity'" in curve and "P99" in curve
# a load result has no per-sample summary: its configuration in words, not a row of dashes (issue 25)
assert "id='summary'" not in html and "id='config'" in html and "fault fp32" in html
assert "id='load-runs'" in html and html.count("<td>sweep</td>") == 12 and "id='load-startup'" in html
assert html.count("<svg") == 1, html.count("<svg")  # bench's bar charts are not drawn for a load run
PY
"$nnperf" coldstart "$work/tiny.onnx" --runs 2 --no-history --html "$work/cs.html" > /dev/null 2>&1
grep -q "id='coldstart-phases'" "$work/cs.html" && grep -q "id='coldstart'" "$work/cs.html" && ok "coldstart page: phase table and chart" ||
  bad "coldstart page"

# --- rendering in headless Chromium --------------------------------------------------------
chrome=""
for c in chromium chromium-browser google-chrome; do command -v "$c" > /dev/null && { chrome=$c; break; }; done
if [ -z "$chrome" ]; then
  echo "SKIP rendering: no chromium on PATH (scripts/install-deps.sh installs Debian's chromium)"
  echo "$passed passed, $failed failed"; [ $failed -eq 0 ] || exit 1; exit 77
fi
# --no-sandbox: tests may run as root (containers), where Chromium's sandbox refuses to start
cr=("$chrome" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run --user-data-dir="$work/profile")
if ! timeout 90 "${cr[@]}" --dump-dom "file://$work/report.html" > "$work/dom.html" 2> "$work/chrome.err"; then
  echo "SKIP rendering: $chrome cannot start here: $(grep -v -i dbus "$work/chrome.err" | tail -n 2 | tr '\n' ' ')"
  echo "$passed passed, $failed failed"; [ $failed -eq 0 ] || exit 1; exit 77
fi
n_svg=$(grep -o "<svg" "$work/dom.html" | wc -l)
[ "$n_svg" -eq 7 ] && ok "rendered DOM holds the 7 SVG charts" || bad "rendered DOM holds $n_svg SVGs, expected 7"
for size in 1100,2400 390,3000; do
  timeout 90 "${cr[@]}" --window-size=$size --screenshot="$work/shot-$size.png" "file://$work/report.html" > /dev/null 2>&1
  $py - "$work/shot-$size.png" <<'PY' && ok "screenshot at $size is not blank and shows the charts" || bad "screenshot at $size"
import sys
from PIL import Image, ImageStat
rgb = Image.open(sys.argv[1]).convert("RGB")
im = rgb.convert("L")
st = ImageStat.Stat(im)
dark = sum(im.histogram()[:128])
# the charts' bar colours (#3367d6 blue, #e8710a orange) on screen: the SVGs were drawn,
# not only the text around them
blue = orange = 0
for r, g, b in rgb.getdata():
    blue += abs(r - 0x33) < 20 and abs(g - 0x67) < 20 and abs(b - 0xd6) < 20
    orange += abs(r - 0xe8) < 20 and abs(g - 0x71) < 20 and abs(b - 0x0a) < 20
print(f"  {sys.argv[1].rsplit('/', 1)[1]}: {im.size[0]}x{im.size[1]}, stddev {st.stddev[0]:.1f}, dark pixels {dark}, "
      f"bar-blue {blue}, bar-orange {orange}")
assert st.stddev[0] > 15 and dark > 5000, "blank or nearly blank"
assert blue > 500 and orange > 500, "no chart bars on screen"
PY
done
# the load page: the curve is in the rendered DOM and drawn on screen in both line colours
timeout 90 "${cr[@]}" --dump-dom "file://$work/load.html" > "$work/ldom.html" 2> /dev/null
grep -q "id=\"load-curve\"" "$work/ldom.html" && [ "$(grep -o "<circle" "$work/ldom.html" | wc -l)" -eq 24 ] &&
  ok "rendered load page holds the curve" || bad "rendered load page: no curve"
timeout 90 "${cr[@]}" --window-size=1100,1400 --screenshot="$work/load.png" "file://$work/load.html" > /dev/null 2>&1
$py - "$work/load.png" <<'PY' && ok "load page screenshot shows the P50 and P99 lines" || bad "load page screenshot"
import sys
from PIL import Image
rgb = Image.open(sys.argv[1]).convert("RGB")
blue = orange = 0
for r, g, b in rgb.getdata():
    blue += abs(r - 0x33) < 20 and abs(g - 0x67) < 20 and abs(b - 0xd6) < 20
    orange += abs(r - 0xe8) < 20 and abs(g - 0x71) < 20 and abs(b - 0x0a) < 20
print(f"  load.png: P50-blue {blue}, P99-orange {orange}")
assert blue > 300 and orange > 300, "curve not drawn"
PY
timeout 90 "${cr[@]}" --print-to-pdf="$work/report.pdf" "file://$work/report.html" > /dev/null 2>&1
[ "$(head -c 4 "$work/report.pdf" 2>/dev/null)" = "%PDF" ] && [ "$(stat -c %s "$work/report.pdf")" -gt 20000 ] &&
  ok "prints to PDF ($(stat -c %s "$work/report.pdf") bytes)" || bad "print to PDF"

echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
