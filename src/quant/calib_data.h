/* Calibration data: the inputs an INT8 calibrator runs the FP32 model on.
 *
 * A calibration folder holds either images (JPEG, PNG) or .npy tensors. Images are
 * decoded to RGB, resized (bilinear, half-pixel centres) so the shorter side is
 * resize_short, centre-cropped to the model input's H x W, scaled to [0, 1] and
 * normalised per channel ((x - mean) / std), as torchvision's ImageNet evaluation does;
 * the result is an NCHW float tensor with N = 1. .npy files are used as they are.
 *
 * The subset is deterministic: file names are sorted (byte order), and when size < the
 * number of files, `size` of them are chosen by a seeded partial Fisher-Yates shuffle and
 * then kept in name order. The same folder, size and seed always give the same list.
 *
 * Hostile files fail with NNP_ERR_FORMAT or NNP_ERR_LIMIT, never abort: dimensions are
 * checked against NNP_IMAGE_MAX_* before any pixel buffer is allocated, libjpeg errors
 * longjmp back to the decoder, and libpng runs with user limits. */
#ifndef NNP_QUANT_CALIB_DATA_H
#define NNP_QUANT_CALIB_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "nnperf/status.h"
#include "nnperf/tensor.h"

#define NNP_IMAGE_MAX_SIDE 16384
#define NNP_IMAGE_MAX_PIXELS ((int64_t)64 << 20) /* 64 Mpixel = 192 MiB of RGB */

/* 8-bit RGB, row-major, 3 bytes per pixel. */
typedef struct nnp_image {
  int width, height;
  uint8_t *rgb;
} nnp_image;

/* Decodes a JPEG or PNG (told apart by their magic bytes) from memory. */
nnp_status nnp_image_decode(const void *data, size_t size, nnp_image *out);
nnp_status nnp_image_read(const char *path, nnp_image *out);
void nnp_image_free(nnp_image *img);

typedef struct nnp_image_norm {
  int resize_short;          /* shorter side after resize (default 256) */
  float mean[3], std[3];     /* on the [0, 1] scale (default ImageNet's) */
} nnp_image_norm;

void nnp_image_norm_default(nnp_image_norm *n);

/* Resize, centre crop, normalise into out (3 x height x width floats, CHW). If the
 * resized image is smaller than the crop (resize_short < height or width), the shorter
 * side is resized to the crop size instead. */
nnp_status nnp_image_to_chw(const nnp_image *img, const nnp_image_norm *norm, int height, int width,
                            float *out);

typedef enum nnp_calib_kind { NNP_CALIB_IMAGES = 1, NNP_CALIB_NPY = 2 } nnp_calib_kind;

typedef struct nnp_calib_options {
  int64_t size;     /* how many files to use; 0: all */
  uint64_t seed;    /* seed of the subset choice */
  nnp_image_norm norm;
  int height, width; /* model input H x W (images only) */
} nnp_calib_options;

void nnp_calib_options_default(nnp_calib_options *o);

/* The chosen files of one folder (owns the paths). */
typedef struct nnp_calib_set {
  nnp_calib_kind kind;
  int n;
  char **paths;
  nnp_calib_options opt;
} nnp_calib_set;

/* Lists dir: every .jpg, .jpeg, .png file (case-insensitive) or every .npy file; a folder with
 * both kinds, or with neither, is an error. */
nnp_status nnp_calib_open(const char *dir, const nnp_calib_options *opt, nnp_calib_set *out);
/* Item i as a tensor (allocated; free with nnp_tensor_free): 1 x 3 x H x W float for an
 * image, the file's tensor for .npy. */
nnp_status nnp_calib_load(const nnp_calib_set *set, int i, nnp_tensor *out);
void nnp_calib_close(nnp_calib_set *set);

#endif
