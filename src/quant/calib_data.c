/* Calibration data reader: JPEG/PNG decode, resize + centre crop + normalise, .npy, and
 * the deterministic subset choice. See calib_data.h. */
#include "quant/calib_data.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jpeglib.h>
#include <png.h>

#include "nnperf/alloc.h"
#include "nnperf/bench.h"
#include "nnperf/npy.h"

/* Files larger than this are not read: no photograph needs it, and it bounds memory. */
#define CALIB_MAX_FILE_BYTES ((size_t)256 << 20)

static nnp_status check_dims(const char *what, long w, long h) {
  if (w <= 0 || h <= 0)
    return nnp_error(NNP_ERR_FORMAT, "%s image has empty dimensions %ldx%ld", what, w, h);
  if (w > NNP_IMAGE_MAX_SIDE || h > NNP_IMAGE_MAX_SIDE || (int64_t)w * h > NNP_IMAGE_MAX_PIXELS)
    return nnp_error(NNP_ERR_LIMIT, "%s image of %ldx%ld pixels is beyond the limit (%d per side, %lld in all)",
                     what, w, h, NNP_IMAGE_MAX_SIDE, (long long)NNP_IMAGE_MAX_PIXELS);
  return NNP_OK;
}

/* ---- JPEG ------------------------------------------------------------------------ */

typedef struct jpeg_err {
  struct jpeg_error_mgr mgr;
  jmp_buf jmp;
  char msg[JMSG_LENGTH_MAX];
} jpeg_err;

/* libjpeg's default error_exit calls exit(): jump back to the decoder instead. */
static void jpeg_error_exit_(j_common_ptr cinfo) {
  jpeg_err *e = (jpeg_err *)cinfo->err;
  (*cinfo->err->format_message)(cinfo, e->msg);
  longjmp(e->jmp, 1);
}

/* Warnings (corrupt data that libjpeg recovers from) are not printed: stay quiet. */
static void jpeg_output_message_(j_common_ptr cinfo) { (void)cinfo; }

static nnp_status decode_jpeg(const void *data, size_t size, nnp_image *out) {
  struct jpeg_decompress_struct cinfo;
  jpeg_err err;
  /* Set after setjmp and read after a longjmp: volatile, so the value survives. */
  uint8_t *volatile pixels = NULL;
  cinfo.err = jpeg_std_error(&err.mgr);
  err.mgr.error_exit = jpeg_error_exit_;
  err.mgr.output_message = jpeg_output_message_;
  err.msg[0] = 0;
  if (setjmp(err.jmp)) {
    jpeg_destroy_decompress(&cinfo);
    nnp_free(pixels);
    return nnp_error(NNP_ERR_FORMAT, "corrupt JPEG: %s", err.msg);
  }
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, (const unsigned char *)data, (unsigned long)size);
  jpeg_read_header(&cinfo, TRUE);
  nnp_status s = check_dims("JPEG", (long)cinfo.image_width, (long)cinfo.image_height);
  if (s != NNP_OK) {
    jpeg_destroy_decompress(&cinfo);
    return s;
  }
  cinfo.out_color_space = JCS_RGB; /* grayscale and YCbCr convert; CMYK fails cleanly */
  jpeg_start_decompress(&cinfo);
  if (cinfo.output_components != 3) {
    jpeg_destroy_decompress(&cinfo);
    return nnp_error(NNP_ERR_UNSUPPORTED, "JPEG decodes to %d components, not RGB", cinfo.output_components);
  }
  size_t w = cinfo.output_width, h = cinfo.output_height;
  pixels = nnp_malloc(w * h * 3);
  if (!pixels) {
    jpeg_destroy_decompress(&cinfo);
    return nnp_error(NNP_ERR_NOMEM, "out of memory for a %zux%zu JPEG", w, h);
  }
  while (cinfo.output_scanline < cinfo.output_height) {
    JSAMPROW row = pixels + (size_t)cinfo.output_scanline * w * 3;
    jpeg_read_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_decompress(&cinfo);
  jpeg_destroy_decompress(&cinfo);
  out->width = (int)w;
  out->height = (int)h;
  out->rgb = pixels;
  return NNP_OK;
}

/* ---- PNG ------------------------------------------------------------------------- */

typedef struct png_src {
  const uint8_t *p;
  size_t left;
  char msg[160];
} png_src;

static void png_read_mem_(png_structp png, png_bytep dst, png_size_t n) {
  png_src *src = png_get_io_ptr(png);
  if (n > src->left) png_error(png, "truncated PNG");
  memcpy(dst, src->p, n);
  src->p += n;
  src->left -= n;
}

static void png_error_(png_structp png, png_const_charp msg) {
  png_src *src = png_get_error_ptr(png);
  snprintf(src->msg, sizeof src->msg, "%s", msg);
  png_longjmp(png, 1);
}

static void png_warning_(png_structp png, png_const_charp msg) {
  (void)png;
  (void)msg;
}

static nnp_status decode_png(const void *data, size_t size, nnp_image *out) {
  png_src src = {data, size, {0}};
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &src, png_error_, png_warning_);
  if (!png) return nnp_error(NNP_ERR_NOMEM, "out of memory for a PNG decoder");
  png_infop info = png_create_info_struct(png);
  uint8_t *volatile pixels = NULL;
  png_bytep *volatile rows = NULL;
  if (!info) {
    png_destroy_read_struct(&png, NULL, NULL);
    return nnp_error(NNP_ERR_NOMEM, "out of memory for a PNG decoder");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, NULL);
    nnp_free(pixels);
    nnp_free(rows);
    return nnp_error(NNP_ERR_FORMAT, "corrupt PNG: %s", src.msg);
  }
  /* Checked by libpng while it reads the header, before it allocates anything large;
   * the chunk cache and chunk size limits bound ancillary chunks (zip bombs in text). */
  png_set_user_limits(png, NNP_IMAGE_MAX_SIDE, NNP_IMAGE_MAX_SIDE);
  png_set_chunk_cache_max(png, 128);
  png_set_chunk_malloc_max(png, (png_alloc_size_t)8 << 20);
  png_set_read_fn(png, &src, png_read_mem_);
  png_read_info(png, info);
  png_uint_32 w = 0, h = 0;
  int depth = 0, color = 0, interlace = 0;
  png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
  nnp_status s = check_dims("PNG", (long)w, (long)h);
  if (s != NNP_OK) {
    png_destroy_read_struct(&png, &info, NULL);
    return s;
  }
  /* Everything becomes 8-bit RGB: palette expanded, gray copied to 3 channels, 16-bit
   * reduced, alpha dropped (photos for calibration have none that matters). */
  if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (depth == 16) png_set_strip_16(png);
  if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
  png_set_strip_alpha(png);
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  if (png_get_channels(png, info) != 3 || png_get_bit_depth(png, info) != 8 ||
      png_get_rowbytes(png, info) != (size_t)w * 3) {
    png_destroy_read_struct(&png, &info, NULL);
    return nnp_error(NNP_ERR_UNSUPPORTED, "PNG does not convert to 8-bit RGB");
  }
  pixels = nnp_malloc((size_t)w * h * 3);
  rows = nnp_malloc((size_t)h * sizeof *rows);
  if (!pixels || !rows) {
    png_destroy_read_struct(&png, &info, NULL);
    nnp_free(pixels);
    nnp_free(rows);
    return nnp_error(NNP_ERR_NOMEM, "out of memory for a %ux%u PNG", (unsigned)w, (unsigned)h);
  }
  for (png_uint_32 y = 0; y < h; y++) rows[y] = pixels + (size_t)y * w * 3;
  png_read_image(png, rows);
  png_read_end(png, NULL);
  png_destroy_read_struct(&png, &info, NULL);
  nnp_free(rows);
  out->width = (int)w;
  out->height = (int)h;
  out->rgb = pixels;
  return NNP_OK;
}

nnp_status nnp_image_decode(const void *data, size_t size, nnp_image *out) {
  const uint8_t *b = data;
  out->width = out->height = 0;
  out->rgb = NULL;
  if (size >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF) return decode_jpeg(data, size, out);
  if (size >= 8 && !png_sig_cmp((png_const_bytep)data, 0, 8)) return decode_png(data, size, out);
  return nnp_error(NNP_ERR_FORMAT, "not a JPEG or PNG image (unknown magic bytes)");
}

nnp_status nnp_image_read(const char *path, nnp_image *out) {
  out->width = out->height = 0;
  out->rgb = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return nnp_error(NNP_ERR_IO, "cannot open image '%s': %s", path, strerror(errno));
  long n = -1;
  if (fseek(f, 0, SEEK_END) == 0) n = ftell(f);
  if (n < 0 || fseek(f, 0, SEEK_SET) != 0) {
    fclose(f);
    return nnp_error(NNP_ERR_IO, "cannot size image '%s'", path);
  }
  if ((size_t)n > CALIB_MAX_FILE_BYTES) {
    fclose(f);
    return nnp_error(NNP_ERR_LIMIT, "image '%s' is %ld bytes, beyond the %zu-byte limit", path, n,
                     CALIB_MAX_FILE_BYTES);
  }
  uint8_t *buf = nnp_malloc(n ? (size_t)n : 1);
  if (!buf) {
    fclose(f);
    return nnp_error(NNP_ERR_NOMEM, "out of memory reading '%s'", path);
  }
  size_t got = fread(buf, 1, (size_t)n, f);
  fclose(f);
  if (got != (size_t)n) {
    nnp_free(buf);
    return nnp_error(NNP_ERR_IO, "short read of image '%s'", path);
  }
  nnp_status s = nnp_image_decode(buf, got, out);
  nnp_free(buf);
  if (s != NNP_OK) return nnp_error_context(s, "image '%s'", path);
  return NNP_OK;
}

void nnp_image_free(nnp_image *img) {
  if (!img) return;
  nnp_free(img->rgb);
  img->rgb = NULL;
  img->width = img->height = 0;
}

/* ---- resize, crop, normalise ------------------------------------------------------ */

void nnp_image_norm_default(nnp_image_norm *n) {
  static const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
  n->resize_short = 256;
  memcpy(n->mean, mean, sizeof mean);
  memcpy(n->std, std, sizeof std);
}

/* Source coordinate of resized pixel i (half-pixel centres), clamped to the image:
 * lower index, upper index and the weight of the upper one. */
static void bilinear_tap(int64_t i, double scale, int src_n, int *i0, int *i1, float *w1) {
  double x = ((double)i + 0.5) * scale - 0.5;
  if (x < 0) x = 0;
  if (x > src_n - 1) x = src_n - 1;
  int a = (int)floor(x);
  *i0 = a;
  *i1 = a + 1 < src_n ? a + 1 : a;
  *w1 = (float)(x - a);
}

nnp_status nnp_image_to_chw(const nnp_image *img, const nnp_image_norm *norm, int height, int width,
                            float *out) {
  if (!img || !img->rgb || img->width <= 0 || img->height <= 0 || height <= 0 || width <= 0)
    return nnp_error(NNP_ERR_INVALID, "image preprocessing needs an image and a positive crop size");
  for (int c = 0; c < 3; c++)
    if (!(norm->std[c] > 0)) return nnp_error(NNP_ERR_INVALID, "std[%d] = %g must be positive", c, (double)norm->std[c]);
  int64_t short_side = norm->resize_short > 0 ? norm->resize_short : 256;
  int64_t crop_max = height > width ? height : width;
  if (short_side < crop_max) short_side = crop_max;
  /* Resized size: shorter side = short_side, aspect ratio kept (torchvision rounds down). */
  int64_t rw, rh;
  if (img->width <= img->height) {
    rw = short_side;
    rh = (int64_t)((double)short_side * img->height / img->width);
  } else {
    rh = short_side;
    rw = (int64_t)((double)short_side * img->width / img->height);
  }
  if (rh < height) rh = height;
  if (rw < width) rw = width;
  /* torchvision's CenterCrop offset: round((size - crop) / 2). */
  int64_t oy = (int64_t)floor((double)(rh - height) / 2.0 + 0.5), ox = (int64_t)floor((double)(rw - width) / 2.0 + 0.5);
  double sy = (double)img->height / rh, sx = (double)img->width / rw;
  size_t plane = (size_t)height * width;
  const uint8_t *p = img->rgb;
  size_t stride = (size_t)img->width * 3;
  for (int y = 0; y < height; y++) {
    int y0, y1;
    float wy;
    bilinear_tap(y + oy, sy, img->height, &y0, &y1, &wy);
    for (int x = 0; x < width; x++) {
      int x0, x1;
      float wx;
      bilinear_tap(x + ox, sx, img->width, &x0, &x1, &wx);
      for (int c = 0; c < 3; c++) {
        float a = p[y0 * stride + x0 * 3 + c], b = p[y0 * stride + x1 * 3 + c];
        float d = p[y1 * stride + x0 * 3 + c], e = p[y1 * stride + x1 * 3 + c];
        float top = a + (b - a) * wx, bot = d + (e - d) * wx;
        float v = (top + (bot - top) * wy) / 255.0f;
        out[c * plane + (size_t)y * width + x] = (v - norm->mean[c]) / norm->std[c];
      }
    }
  }
  return NNP_OK;
}

/* ---- folder listing and subset ----------------------------------------------------- */

void nnp_calib_options_default(nnp_calib_options *o) {
  memset(o, 0, sizeof *o);
  o->seed = 1;
  nnp_image_norm_default(&o->norm);
  o->height = o->width = 224;
}

static int has_ext(const char *name, const char *ext) {
  size_t n = strlen(name), e = strlen(ext);
  return n > e && strcasecmp(name + n - e, ext) == 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

void nnp_calib_close(nnp_calib_set *set) {
  if (!set) return;
  for (int i = 0; i < set->n; i++) nnp_free(set->paths[i]);
  nnp_free(set->paths);
  set->paths = NULL;
  set->n = 0;
}

#define CALIB_MAX_FILES 1000000

nnp_status nnp_calib_open(const char *dir, const nnp_calib_options *opt, nnp_calib_set *out) {
  memset(out, 0, sizeof *out);
  out->opt = *opt;
  if (opt->size < 0) return nnp_error(NNP_ERR_INVALID, "calibration size %lld is negative", (long long)opt->size);
  DIR *d = opendir(dir);
  if (!d) return nnp_error(NNP_ERR_IO, "cannot open calibration folder '%s': %s", dir, strerror(errno));
  char **names = NULL;
  int n = 0, cap = 0, n_img = 0, n_npy = 0;
  nnp_status s = NNP_OK;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    const char *nm = e->d_name;
    int img = has_ext(nm, ".jpg") || has_ext(nm, ".jpeg") || has_ext(nm, ".png");
    int npy = has_ext(nm, ".npy");
    if (!img && !npy) continue;
    if (n == CALIB_MAX_FILES) {
      s = nnp_error(NNP_ERR_LIMIT, "calibration folder '%s' has more than %d files", dir, CALIB_MAX_FILES);
      break;
    }
    if (n == cap) {
      int nc = cap ? cap * 2 : 64;
      char **nn = nnp_realloc(names, (size_t)nc * sizeof *nn);
      if (!nn) {
        s = nnp_error(NNP_ERR_NOMEM, "out of memory listing '%s'", dir);
        break;
      }
      names = nn;
      cap = nc;
    }
    size_t len = strlen(dir) + 1 + strlen(nm) + 1;
    names[n] = nnp_malloc(len);
    if (!names[n]) {
      s = nnp_error(NNP_ERR_NOMEM, "out of memory listing '%s'", dir);
      break;
    }
    snprintf(names[n], len, "%s/%s", dir, nm);
    n++;
    n_img += img;
    n_npy += npy;
  }
  closedir(d);
  out->paths = names;
  out->n = n;
  if (s == NNP_OK && n == 0) s = nnp_error(NNP_ERR_INVALID, "calibration folder '%s' has no .jpg, .png or .npy files", dir);
  if (s == NNP_OK && n_img && n_npy)
    s = nnp_error(NNP_ERR_INVALID, "calibration folder '%s' mixes images (%d) and .npy tensors (%d)", dir, n_img, n_npy);
  if (s != NNP_OK) {
    nnp_calib_close(out);
    return s;
  }
  out->kind = n_img ? NNP_CALIB_IMAGES : NNP_CALIB_NPY;
  qsort(names, (size_t)n, sizeof *names, cmp_str);
  if (opt->size > 0 && opt->size < n) {
    /* Partial Fisher-Yates with a splitmix64 stream: the first k slots become a uniform
     * seeded choice; the rest are freed; the chosen ones go back to name order. */
    int k = (int)opt->size;
    for (int i = 0; i < k; i++) {
      uint64_t r = nnp_mix64(opt->seed * 0x9E3779B97F4A7C15ull + (uint64_t)i);
      int j = i + (int)(r % (uint64_t)(n - i));
      char *t = names[i];
      names[i] = names[j];
      names[j] = t;
    }
    for (int i = k; i < n; i++) nnp_free(names[i]);
    out->n = k;
    qsort(names, (size_t)k, sizeof *names, cmp_str);
  }
  return NNP_OK;
}

nnp_status nnp_calib_load(const nnp_calib_set *set, int i, nnp_tensor *out) {
  memset(out, 0, sizeof *out);
  if (i < 0 || i >= set->n) return nnp_error(NNP_ERR_INVALID, "calibration item %d out of range [0, %d)", i, set->n);
  if (set->kind == NNP_CALIB_NPY) return nnp_npy_read(set->paths[i], out);
  nnp_image img;
  NNP_TRY(nnp_image_read(set->paths[i], &img));
  out->dtype = NNP_F32;
  out->rank = 4;
  out->dims[0] = 1;
  out->dims[1] = 3;
  out->dims[2] = set->opt.height;
  out->dims[3] = set->opt.width;
  nnp_status s = nnp_tensor_alloc(out);
  if (s == NNP_OK) s = nnp_image_to_chw(&img, &set->opt.norm, set->opt.height, set->opt.width, out->data);
  nnp_image_free(&img);
  if (s != NNP_OK) {
    nnp_tensor_free(out);
    return nnp_error_context(s, "'%s'", set->paths[i]);
  }
  return NNP_OK;
}
