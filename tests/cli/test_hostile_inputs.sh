#!/usr/bin/env bash
# Hostile inputs through the command line: files that are not what they claim (FIFOs,
# devices, symlink loops, folders, truncated and corrupt models, corrupt .npy and .pb
# tensors, bad result JSON), bad values on the command line, garbage on the worker
# protocol, and workers that crash, hang or run out of memory.
#
# Each case must end with its expected exit status, a single stderr line, and no crash
# (no status >= 128, no sanitizer report). This script prints every case as
#   case ID: exit N: <the stderr line, with this run's temporary folder written WORK>
# and docs/hostile-inputs.md holds the exact line each case must print:
# tests/docs/check_hostile_table.py runs this script and compares the two, so a changed
# message fails there, and a case missing from the table fails there too.
set -uo pipefail
nnperf=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/nnp-hostile.XXXXXX")
trap 'rm -rf "$work"' EXIT
passed=0 failed=0
ok() { passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
py=/usr/bin/python3
cd "$work" || exit 1

# hcase ID STATUS -- command...: runs the command (60 s limit) from $work. The message
# is the last stderr line; with MSG_FROM=stdout the last stdout line (the worker answers
# on its protocol channel), with MSG_FROM=row the first row of row.json ("status: reason").
hcase() {
  local id=$1 want=$2
  shift 3
  rm -f "$work/row.json"
  timeout -k 5 60 "$@" > "$work/out" 2> "$work/err" < /dev/null
  local got=$?
  local msg lines
  case "${MSG_FROM:-stderr}" in
    stdout) cp "$work/out" "$work/err" ;;
    row) $py -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(r['status'] + ': ' + r['reason'])" \
           "$work/row.json" > "$work/err" 2>&1 ;;
  esac
  [ "${MSG_FROM:-stderr}" = stdout ] && tail -n 1 "$work/out" > "$work/err"
  lines=$(wc -l < "$work/err")
  msg=$(tail -n 1 "$work/err" | sed "s|$work|WORK|g")
  echo "case $id: exit $got: $msg"
  if [ "$got" -ne "$want" ]; then bad "$id: exit $got, expected $want: $(head -c 400 "$work/err")"; return; fi
  if [ "$lines" -ne 1 ]; then bad "$id: $lines stderr lines, expected 1: $(head -c 600 "$work/err")"; return; fi
  if grep -qE "runtime error:|Sanitizer" "$work/err"; then bad "$id: sanitizer report"; return; fi
  ok
}

"$nnperf" zoo tiny -o tiny.onnx > /dev/null || { echo "FAIL cannot write zoo model"; exit 1; }
size=$(stat -c %s tiny.onnx)

# --- the model file itself -----------------------------------------------------------
hcase model_missing 1 -- "$nnperf" run nope.onnx
: > empty.onnx
hcase model_empty 1 -- "$nnperf" run empty.onnx
mkfifo fifo.onnx
hcase model_fifo 1 -- "$nnperf" run fifo.onnx        # must not block waiting for a writer
ln -s /dev/zero zero.onnx
hcase model_symlink_dev_zero 1 -- "$nnperf" run zero.onnx   # endless data
hcase model_dev_null 1 -- "$nnperf" run /dev/null
ln -s loop_b loop_a
ln -s loop_a loop_b
hcase model_symlink_loop 1 -- "$nnperf" run loop_a
ln -s nowhere.onnx dangling.onnx
hcase model_dangling_symlink 1 -- "$nnperf" run dangling.onnx
mkdir folder.onnx
hcase model_is_folder 1 -- "$nnperf" run folder.onnx
head -c 1 tiny.onnx > cut1.onnx
hcase model_truncated_1_byte 1 -- "$nnperf" run cut1.onnx
head -c $((size / 2)) tiny.onnx > cut_half.onnx
hcase model_truncated_half 1 -- "$nnperf" run cut_half.onnx
head -c $((size - 1)) tiny.onnx > cut_last.onnx
hcase model_truncated_last_byte 1 -- "$nnperf" run cut_last.onnx
$py -c "import random; random.seed(7); open('garbage.onnx','wb').write(bytes(random.randrange(256) for _ in range(4096)))"
hcase model_random_bytes 1 -- "$nnperf" run garbage.onnx
printf '{"not": "onnx"}' > json.onnx
hcase model_is_json 1 -- "$nnperf" run json.onnx
hcase zoo_unknown 1 -- "$nnperf" run zoo:nosuchnet

# --- graphs that load but must not compile or run (built with python3-onnx) -----------
$py - <<'PY'
import numpy as np
import onnx
from onnx import TensorProto as T, helper as h, numpy_helper as nh

def save(name, node, inits=(), opset=13, n_out=1, x_type=T.FLOAT):
    x = h.make_tensor_value_info("x", x_type, [2, 3])
    xi = h.make_tensor_value_info("xi", T.INT64, [2, 3])
    outs = [h.make_tensor_value_info(o, T.FLOAT, None) for o in ("y", "z")[:n_out]]
    ins = [x, xi] if "xi" in node.input else [x]
    inits = [nh.from_array(np.array(v, dt), k) for k, v, dt in inits]
    m = h.make_model(h.make_graph([node], "g", ins, outs, inits), opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, name + ".onnx")

i64 = np.int64
save("g_dtype_mix", h.make_node("Add", ["x", "xi"], ["y"], name="add1"))
save("g_gather_oob", h.make_node("Gather", ["x", "idx"], ["y"], name="g1", axis=0), [("idx", [5], i64)])
save("g_reshape_count", h.make_node("Reshape", ["x", "s"], ["y"], name="r1"), [("s", [4, 4], i64)])
save("g_conv_rank", h.make_node("Conv", ["x", "w"], ["y"], name="c1"), [("w", np.ones((1, 1, 3, 3)), np.float32)])
save("g_transpose_perm", h.make_node("Transpose", ["x"], ["y"], name="t1", perm=[0, 0]))
save("g_concat_axis", h.make_node("Concat", ["x", "x"], ["y"], name="cc", axis=5))
save("g_matmul_k", h.make_node("MatMul", ["x", "x"], ["y"], name="mm"))
save("g_split_sizes", h.make_node("Split", ["x", "sp"], ["y", "z"], name="sp1", axis=1), [("sp", [1, 5], i64)], n_out=2)
save("g_slice_step_0", h.make_node("Slice", ["x", "st", "en", "ax", "stp"], ["y"], name="sl"),
     [("st", [0], i64), ("en", [2], i64), ("ax", [0], i64), ("stp", [0], i64)])
save("g_constant_of_shape_huge", h.make_node("ConstantOfShape", ["s"], ["y"], name="cos1"), [("s", [1 << 20] * 3, i64)])
save("g_range_huge", h.make_node("Range", ["a", "b", "d"], ["y"], name="rg"),
     [("a", 0, np.float32), ("b", 1e30, np.float32), ("d", 1e-30, np.float32)])
save("g_opset_0", h.make_node("Relu", ["x"], ["y"], name="r"), opset=0)
save("g_cast_to_string", h.make_node("Cast", ["x"], ["y"], name="c", to=8))
PY
for g in dtype_mix gather_oob reshape_count conv_rank transpose_perm concat_axis matmul_k split_sizes slice_step_0 \
         constant_of_shape_huge range_huge opset_0 cast_to_string; do
  hcase "graph_$g" 1 -- "$nnperf" run "g_$g.onnx" --quiet
done

# --- input tensors (.npy, .pb) -------------------------------------------------------
npy() { # npy FILE PYTHON-EXPRESSION-FOR-BYTES
  $py -c "import numpy as np, struct, sys; open(sys.argv[1], 'wb').write($2)" "$1"
}
hdr() { # a v1.0 .npy header for the dict literal $1, padded to 64 bytes
  echo "(lambda h: b'\\x93NUMPY\\x01\\x00' + struct.pack('<H', len(h)) + h)(($1).ljust(63).encode() + b'\\n')"
}
npy npy_bad_magic.npy "b'NOTNUMPY' + bytes(100)"
hcase npy_bad_magic 1 -- "$nnperf" run tiny.onnx --input input=npy_bad_magic.npy
npy npy_trunc_header.npy "b'\\x93NUMPY\\x01\\x00\\x76\\x00{\\'descr\\''"
hcase npy_truncated_header 1 -- "$nnperf" run tiny.onnx --input input=npy_trunc_header.npy
npy npy_short_data.npy "$(hdr "\"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }\"") + bytes(100)"
hcase npy_short_data 1 -- "$nnperf" run tiny.onnx --input input=npy_short_data.npy
npy npy_huge_shape.npy "$(hdr "\"{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 100000000000, 100000000000), }\"")"
hcase npy_huge_shape 1 -- "$nnperf" run tiny.onnx --input input=npy_huge_shape.npy
npy npy_negative_dim.npy "$(hdr "\"{'descr': '<f4', 'fortran_order': False, 'shape': (1, -3, 32, 32), }\"")"
hcase npy_negative_dim 1 -- "$nnperf" run tiny.onnx --input input=npy_negative_dim.npy
npy npy_object.npy "$(hdr "\"{'descr': '|O', 'fortran_order': False, 'shape': (1,), }\"") + bytes(8)"
hcase npy_object_dtype 1 -- "$nnperf" run tiny.onnx --input input=npy_object.npy
npy npy_fortran.npy "$(hdr "\"{'descr': '<f4', 'fortran_order': True, 'shape': (1, 3, 32, 32), }\"") + bytes(4*3072)"
hcase npy_fortran_order 1 -- "$nnperf" run tiny.onnx --input input=npy_fortran.npy
npy npy_big_endian.npy "$(hdr "\"{'descr': '>f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }\"") + bytes(4*3072)"
hcase npy_big_endian 1 -- "$nnperf" run tiny.onnx --input input=npy_big_endian.npy
npy npy_rank9.npy "$(hdr "\"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }\"") + bytes(4)"
hcase npy_rank_9 1 -- "$nnperf" run tiny.onnx --input input=npy_rank9.npy
npy npy_header_len.npy "b'\\x93NUMPY\\x01\\x00\\xff\\xff' + b'{' * 40"
hcase npy_header_length_past_end 1 -- "$nnperf" run tiny.onnx --input input=npy_header_len.npy
npy npy_not_dict.npy "$(hdr "\"[1, 2, 3]\"")"
hcase npy_header_not_a_dict 1 -- "$nnperf" run tiny.onnx --input input=npy_not_dict.npy
$py -c "import numpy as np; np.save('x_i64.npy', np.zeros((1, 3, 32, 32), np.int64))"
hcase npy_wrong_dtype 1 -- "$nnperf" run tiny.onnx --input input=x_i64.npy
$py -c "import numpy as np; np.save('x_4ch.npy', np.zeros((1, 4, 32, 32), np.float32))"
hcase npy_wrong_shape 1 -- "$nnperf" run tiny.onnx --input input=x_4ch.npy
hcase input_unknown_name 1 -- "$nnperf" run tiny.onnx --input nosuch=x_4ch.npy
hcase input_file_missing 1 -- "$nnperf" run tiny.onnx --input input=nope.npy
hcase input_is_fifo 1 -- "$nnperf" run tiny.onnx --input input=fifo.onnx
printf '\x08\x01\x08\x03\x10\x01' > t_trunc.pb
hcase pb_truncated 1 -- "$nnperf" run tiny.onnx --input input=t_trunc.pb
head -c 64 /dev/zero | tr '\0' '\377' > t_garbage.pb
hcase pb_garbage 1 -- "$nnperf" run tiny.onnx --input input=t_garbage.pb

# --- command-line values ---------------------------------------------------------------
hcase arg_batch_zero 2 -- "$nnperf" run tiny.onnx --batch 0
hcase arg_batch_negative 2 -- "$nnperf" run tiny.onnx --batch -3
hcase arg_batch_huge 2 -- "$nnperf" run tiny.onnx --batch 1000000000
hcase arg_shape_garbage 2 -- "$nnperf" run tiny.onnx --shape input:1xAx3
hcase arg_input_without_equals 2 -- "$nnperf" run tiny.onnx --input input
: > a_file
hcase output_dir_is_a_file 1 -- "$nnperf" run tiny.onnx --output-dir a_file
hcase bench_threads_zero 2 -- "$nnperf" bench tiny.onnx --threads 0
hcase bench_processes_too_many 2 -- "$nnperf" bench tiny.onnx --processes 99
hcase bench_unknown_backend 2 -- "$nnperf" bench tiny.onnx --backends nosuch

# --- the worker protocol (what a worker reads from its parent) ---------------------------
proto() { # proto ID BYTES-EXPRESSION [STATUS]
  $py -c "import sys; sys.stdout.buffer.write($2)" > "proto_$1.bin"
  MSG_FROM=stdout hcase "protocol_$1" "${3:-2}" -- sh -c "\"$nnperf\" __worker < proto_$1.bin"
}
spec() { # spec ID STATUS LINES...: a well-formed header, then LINES, then run
  local id=$1 st=$2
  shift 2
  printf 'nnperf-spec 1\n' > "proto_$id.bin"
  printf '%s\n' "$@" run >> "proto_$id.bin"
  MSG_FROM=stdout hcase "protocol_$id" "$st" -- sh -c "\"$nnperf\" __worker < proto_$id.bin"
}
spec unknown_precision 2 "backend native" "model $work/tiny.onnx" "precision fp7"
spec unknown_backend 1 "backend nosuch" "model $work/tiny.onnx"
spec model_missing 1 "backend native" "model $work/nope.onnx"
spec model_fifo 1 "backend native" "model $work/fifo.onnx"
spec short_loop_line 2 "backend native" "model $work/tiny.onnx" "loop 1 2"
spec tensor_size_lie 2 "backend native" "model $work/tiny.onnx" "tensor input 1 4 1 3 999999 999999 shape"
spec dynamic_range_reversed 2 "backend native" "model $work/tiny.onnx" "dynamic 0 1x3x[40..24]x32 input"
spec no_backend 2 "model $work/tiny.onnx"
proto empty "b''"
proto garbage "b'GET / HTTP/1.1\\r\\n\\r\\n' * 4"
proto huge_length "b'\\xff' * 64"
proto zeros "bytes(4096)"

# --- workers that misbehave (the fault backend) and result files -------------------------
quick=(--warmup 2 --iterations 10 --min-time 0 --threads 1 --processes 1 --quiet)
# Under AddressSanitizer the worker's own SEGV handler would turn the crash into "exit 1
# with a report": handle_segv=0 lets the signal through, as in a release build.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
fault() { # fault ID MODE [bench options]: the row's status and reason
  local id=$1 mode=$2
  shift 2
  MSG_FROM=row hcase "$id" 1 -- "$nnperf" bench tiny.onnx --backends fault --backend-options "fault:mode=$mode" \
    "${quick[@]}" --json row.json "$@"
}
sanitized=0
grep -qa __asan_init "$nnperf" && sanitized=1 # the ASan runtime's entry point is linked in
fault worker_segfault segv
fault worker_abort abort
fault worker_sigkill kill
fault worker_exit_3 exit
fault worker_error error
fault worker_hang hang --timeout 2
if [ $sanitized = 1 ]; then
  # the ASan worker skips RLIMIT_AS (its shadow memory alone exceeds any limit), so the
  # parent's resident-set watchdog ends it instead, with another message
  echo "skip worker_memory_bomb: this nnperf is built with AddressSanitizer, whose worker runs without RLIMIT_AS"
else
  fault worker_memory_bomb bomb --mem-limit 256
fi
printf '{"rows": [' > r_trunc.json
hcase resume_truncated_json 1 -- "$nnperf" bench tiny.onnx "${quick[@]}" --resume r_trunc.json
echo '{"schema_version": 1, "rows": 3}' > r_shape.json
hcase resume_not_a_result 1 -- "$nnperf" bench tiny.onnx "${quick[@]}" --resume r_shape.json
echo '{"schema_version": 99}' > r_schema.json
hcase resume_future_schema 1 -- "$nnperf" bench tiny.onnx "${quick[@]}" --resume r_schema.json
hcase resume_fifo 1 -- "$nnperf" bench tiny.onnx "${quick[@]}" --resume fifo.onnx
"$nnperf" bench tiny.onnx --backends native "${quick[@]}" --json good.json > /dev/null 2>&1
cp good.json good_copy.json
hcase resume_other_seed 2 -- "$nnperf" bench tiny.onnx --backends native "${quick[@]}" --seed 9 --resume good_copy.json
hcase resume_other_rows 2 -- "$nnperf" bench tiny.onnx --backends native "${quick[@]}" --batch 2 --resume good_copy.json
cmp -s good.json good_copy.json && ok || bad "a refused --resume changed its file"
# report and compare read results with the same loader: a FIFO must not block them either
hcase report_fifo 1 -- "$nnperf" report fifo.onnx -o fifo_report.html
hcase compare_fifo 1 -- "$nnperf" compare good.json fifo.onnx
$py -c "
import json; d = json.load(open('good.json')); d['rows'][0]['samples_s'][0] = -1.0
json.dump(d, open('r_negative.json', 'w'))"
hcase resume_negative_sample 1 -- "$nnperf" bench tiny.onnx --backends native "${quick[@]}" --resume r_negative.json
$py -c "
import json; d = json.load(open('good.json')); d['rows'][0]['process_samples'] = [1000000]
json.dump(d, open('r_counts.json', 'w'))"
hcase resume_sample_counts_lie 1 -- "$nnperf" bench tiny.onnx --backends native "${quick[@]}" --resume r_counts.json
# result destinations are checked before the first row, not after the last
hcase bench_json_folder_missing 2 -- "$nnperf" bench tiny.onnx --backends native "${quick[@]}" --json nodir/x.json
hcase bench_csv_folder_unwritable 2 -- "$nnperf" bench tiny.onnx --backends native "${quick[@]}" --csv /proc/x.csv
hcase bench_html_is_a_folder 2 -- "$nnperf" bench tiny.onnx --backends native "${quick[@]}" --html folder.onnx
[ ! -e nodir ] && ok || bad "a refused --json destination created its folder"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
