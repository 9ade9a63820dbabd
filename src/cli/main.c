/* nnperf: inference-framework performance analysis. */
#include <stdio.h>
#include <string.h>

#include "bench/worker.h"
#include "cli/cli.h"

#ifndef NNP_VERSION
#define NNP_VERSION "0.1.0"
#endif

typedef struct command {
  const char *name;
  int (*fn)(int argc, char **argv);
  const char *summary;
} command;

static const command commands[] = {
    {"bench", nnp_cmd_bench, "benchmark a model on every available backend under one methodology"},
    {"backends", nnp_cmd_backends, "list the backends, whether each is available, its version or install hint"},
    {"run", nnp_cmd_run, "run one inference with the native engine, write outputs as .npy"},
    {"inspect", nnp_cmd_inspect, "ops, shapes, parameters, MACs/FLOPs and activation memory of a model"},
    {"explain", nnp_cmd_explain, "ablation ladder: how much each engine optimisation gains on a model"},
    {"load", nnp_cmd_load, "latency under load: single-stream, multi-stream, server (Poisson QPS), offline"},
    {"coldstart", nnp_cmd_coldstart, "fresh process to first result, over many fresh processes"},
    {"zoo", nnp_cmd_zoo, "write a built-in architecture (resnet18, mobilenet_v2, ...) as an ONNX file"},
    {"report", nnp_cmd_report, "a bench result as one self-contained HTML page with SVG charts"},
    {"history", nnp_cmd_history, "list, show or export the bench runs stored in the history database"},
    {"compare", nnp_cmd_compare, "compare two results row by row: regressions and improvements beyond the noise"},
    {"quantize", nnp_cmd_quantize, "calibrate on real data and write an INT8 (QDQ) ONNX model"},
    {"llm", nnp_cmd_llm, "LLM inference and serving: TTFT, TPOT, ITL, tokens/s (llm bench: llama.cpp, PyTorch; llm load: servers)"},
    {"sweep", nnp_cmd_sweep, "run a sweep plan here or on Slurm (--slurm); its status, and its rows collected into one result"},
    {"convert", nnp_cmd_convert, "write a model as a .tflite file (nnperf's ONNX->TFLite converter; fp32 or int8 from QDQ)"},
    {"advise", nnp_cmd_advise, "progressive search for the first configuration that meets a P99/memory target at an accuracy"},
};

static void usage(FILE *f) {
  fprintf(f,
          "nnperf %s - measure inference frameworks under one methodology, and explain the differences\n\n"
          "usage: nnperf COMMAND [options]     (nnperf COMMAND --help for each command's options)\n\n"
          "commands:\n",
          NNP_VERSION);
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
  fprintf(f,
          "\nmodels: a path to an .onnx file, or zoo:NAME for a built-in model with seeded weights\n"
          "        (nnperf zoo --list shows them).\n\n"
          "examples:\n"
          "  nnperf bench                      (default model, every available backend)\n"
          "  nnperf zoo resnet18 -o resnet18.onnx\n"
          "  nnperf inspect resnet18.onnx\n"
          "  nnperf run resnet18.onnx --batch 4 --output-dir out/\n"
          "  nnperf run model.onnx --input input=image.npy\n\n"
          "exit status: 0 success, 1 the model or data is at fault (one-line error), 2 bad command line\n");
}

int main(int argc, char **argv) {
  if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
    usage(stdout);
    return argc < 2 ? CLI_USAGE : CLI_OK;
  }
  /* internal: a benchmark worker process, spawned by nnperf bench (docs/worker-protocol.md) */
  if (!strcmp(argv[1], "__worker")) return nnp_worker_main(0, 1);
  if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
    printf("nnperf %s\n", NNP_VERSION);
    return CLI_OK;
  }
  for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
    if (!strcmp(argv[1], commands[i].name)) return commands[i].fn(argc - 1, argv + 1);
  fprintf(stderr, "nnperf: unknown command '%s' (nnperf --help lists the commands)\n", argv[1]);
  return CLI_USAGE;
}
